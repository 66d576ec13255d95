;; High-level matrix-matrix product C = A B: for each row of A and each column of B (a row of
;; `transpose b`), the dot product.
;; data: hl_mm.json
;; expect: [[10.0, -4.0, 6.0, 3.0], [5.0, -3.5, 0.25, 2.0]]
(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (map (lambda (row)
           (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                      (transpose b))))
         a)))
