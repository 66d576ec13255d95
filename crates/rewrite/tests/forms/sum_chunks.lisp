;; A sum written as the partial sums of chunks of 1024, then their sum.
;;   s = sum_c sum_{i in chunk c} xs[i]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f (join (map (lambda (c) (reduce + 0.0f c)) (split #1024 xs))))))
