;; gemv T: y = alpha A^T x + beta y (A row-major M x N, x of length M, y of length N)
;; size: M=8192 N=8192
;; form: no transpose: for each column index j (generate N) map over zip A x picking (at j row) times x_i; y read with (at j y)
;; data: data/gemv_t.json
;; expect: [-6.921875,-2.859375,0.6640625,1.34375,-6.75,-1.8515625,2.0625,-1.515625]
(lift (M N) ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (A x y alpha beta)
    (map (lambda (j)
           (+ (* alpha (at 0 (reduce + 0.0f (map (lambda (rx) (* (at j (get #0 rx)) (get #1 rx))) (zip A x)))))
              (* beta (at j y))))
         (generate N (lambda (j) j)))))
