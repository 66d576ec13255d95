;; A matrix-vector product with a bias, y = A x + b (A row-major, M x N), the dot product of
;; each row with x written inline.
(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N) (array-type float M))
  (lambda (a x b)
    (join
      (map (lambda (rb)
             (map (lambda (s) (+ s (get #1 rb)))
                  (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip (get #0 rb) x)))))
           (zip a b)))))
