;; A batch of small matrix products, C_b = A_b B_b (each 32 x 32, row-major), B_b read by
;; columns through `transpose`.
(lift
  (B M K N)
  ((array-type (array-type (array-type float K) M) B) (array-type (array-type (array-type float N) K) B))
  (lambda (as bs)
    (map (lambda (ab)
           (map (lambda (row)
                  (map (lambda (col)
                         (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                       (transpose (get #1 ab))))
                (get #0 ab)))
         (zip as bs))))
