;; gemv T: y = alpha A^T x + beta y (A row-major M x N, x of length M, y of length N)
;; size: M=8192 N=8192
;; form: zip y (transpose A) (swapped) and zip x col; commuted add lambda; reduce result used directly (map over it) then join
;; data: data/gemv_t.json
;; expect: [-6.921875,-2.859375,0.6640625,1.34375,-6.75,-1.8515625,2.0625,-1.515625]
(lift (M N) ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (A x y alpha beta)
    (join (map (lambda (yc)
                 (map (lambda (d) (+ (* d alpha) (* (get #0 yc) beta)))
                      (reduce (lambda (a b) (+ b a)) 0.0f (map (lambda (p) (* (get #1 p) (get #0 p))) (zip x (get #1 yc))))))
               (zip y (transpose A))))))
