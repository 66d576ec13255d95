;; gemv N: y = alpha A x + beta y (A row-major M x N)
;; size: M=8192 N=8192
;; form: each row's dot product as partial sums over chunks of 4 (split #4 of zip row x), then the sum of the partials; beta*y + alpha*d with commuted operands (d alpha)
;; data: data/gemv_n.json
;; expect: [5.046875,15.3203125,3.7890625,-4.8671875,3.65625,2.0546875]
(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (A x y alpha beta)
    (map (lambda (ry)
           (let partials (join (map (lambda (c) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) c)))
                                    (split #4 (zip (get #0 ry) x))))
             (+ (* beta (get #1 ry)) (* (at 0 (reduce + 0.0f partials)) alpha))))
         (zip A y))))
