;; gemv N: y = alpha A x + beta y (A row-major M x N)
;; size: M=8192 N=8192
;; form: two stages: first ax = A x as a vector (map row reduce, join) bound with let, then map over zip ax y; alpha folded into the products (alpha*a*x summed)
;; data: data/gemv_n.json
;; expect: [5.046875,15.3203125,3.7890625,-4.8671875,3.65625,2.0546875]
(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (A x y alpha beta)
    (let ax (join (map (lambda (row) (reduce + 0.0f (map (lambda (p) (* alpha (* (get #0 p) (get #1 p)))) (zip row x)))) A))
      (map (lambda (p) (+ (get #0 p) (* beta (get #1 p)))) (zip ax y)))))
