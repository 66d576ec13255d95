;; A matrix product with B given transposed (C = A Bt^T, both operands row-major, rows of Bt are
;; columns of B), the dot product written inline.
(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float K) N))
  (lambda (a bt)
    (map (lambda (row)
           (map (lambda (col)
                  (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                bt))
         a)))
