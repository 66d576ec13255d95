;; gesummv: y = alpha A x + beta B x (A, B row-major M x N)
;; size: M=8192 N=8192
;; form: one reduce per row over zip (a-row, b-row, x) of (alpha*a + beta*b)*x_j (the two matrices combined before the sum)
;; data: data/gesummv.json
;; expect: [-2.875,4.671875,-2.734375,-2.6015625,2.171875,6.25]
(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (A B x alpha beta)
    (join (map (lambda (ab)
                 (reduce + 0.0f (map (lambda (t) (* (+ (* alpha (get #0 t)) (* beta (get #1 t))) (get #2 t)))
                                     (zip (get #0 ab) (get #1 ab) x))))
               (zip A B)))))
