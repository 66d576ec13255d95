;; gemv N: y = alpha A x + beta y (A row-major M x N)
;; size: M=8192 N=8192
;; form: map over zip A y; the row's dot product (zip row x) taken with at 0 and bound with let; alpha*d + beta*yi
;; data: data/gemv_n.json
;; expect: [5.046875,15.3203125,3.7890625,-4.8671875,3.65625,2.0546875]
(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (A x y alpha beta)
    (map (lambda (ry)
           (let d (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip (get #0 ry) x))))
             (+ (* alpha d) (* beta (get #1 ry)))))
         (zip A y))))
