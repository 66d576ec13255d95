;; A dot product of two vectors, written with the product inline over their zip.
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))
