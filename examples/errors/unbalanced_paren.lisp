;; A `(` that is never closed: the reader points at it.
;; error: unbalanced parenthesis
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs)))
