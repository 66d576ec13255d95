;; gemv N: y = alpha A x + beta y (A row-major M x N)
;; size: M=8192 N=8192
;; form: explicit indices: generate M over rows and generate N over columns, every operand read with at
;; data: data/gemv_n.json
;; expect: [5.046875,15.3203125,3.7890625,-4.8671875,3.65625,2.0546875]
(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (A x y alpha beta)
    (map (lambda (i)
           (+ (* alpha (at 0 (reduce + 0.0f (map (lambda (j) (* (at j (at i A)) (at j x))) (generate N (lambda (j) j))))))
              (* beta (at i y))))
         (generate M (lambda (i) i)))))
