;; Both branches of `if` must have the same type: here float and int.
;; error: the branches of `if` have different types: float and int
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (if (> x 0.0f) x 0)) xs))))
