;; A matrix product with A given transposed (C = At^T B, At row-major K x M, B row-major K x N),
;; written with `transpose` on both sides and the dot product bound by `let`, no `join`.
(lift
  (M K N)
  ((array-type (array-type float M) K) (array-type (array-type float N) K))
  (lambda (at b)
    (map (lambda (row)
           (map (lambda (col)
                  (let prods (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))
                    (reduce + 0.0f prods)))
                (transpose b)))
         (transpose at))))
