;; `zip` needs arrays of the same length; N and M may differ.
;; error: `zip` of arrays of different lengths: N and M
(lift (N M) ((array-type float N) (array-type float M))
  (lambda (xs ys) (toGlobal (mapGlb (lambda (p) (get #0 p)) (zip xs ys)))))
