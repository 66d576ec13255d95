;; A primitive applied to more arguments than it takes.
;; error: too many arguments
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs xs))))
