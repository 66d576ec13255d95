;; A malformed number literal.
;; error: bad number `2.0.0f`
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0.0f)) xs))))
