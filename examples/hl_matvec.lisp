;; High-level matrix-vector product: a `map` over the rows, each a dot product with `v`.
;; data: hl_matvec.json
;; expect: [10.0, 2.0, -4.0, 20.0]
(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N))
  (lambda (mat v)
    (join (map (lambda (row) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row v))))
               mat))))
