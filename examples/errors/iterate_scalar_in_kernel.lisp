;; Inside a kernel `iterate` steps an array; a scalar state is not implemented yet.
;; error: `iterate` inside a kernel over a float (not an array) is not supported yet
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (iterate #3 (lambda (y) (* y 2.0f)) x)) xs))))
