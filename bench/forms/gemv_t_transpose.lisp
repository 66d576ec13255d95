;; gemv T: y = alpha A^T x + beta y (A row-major M x N, x of length M, y of length N)
;; size: M=8192 N=8192
;; form: transpose A, then as gemv N: map over zip (transpose A) y, dot with at 0 bound with let
;; data: data/gemv_t.json
;; expect: [-6.921875,-2.859375,0.6640625,1.34375,-6.75,-1.8515625,2.0625,-1.515625]
(lift (M N) ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (A x y alpha beta)
    (map (lambda (cy)
           (let d (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip (get #0 cy) x))))
             (+ (* alpha d) (* beta (get #1 cy)))))
         (zip (transpose A) y))))
