;; gesummv: y = alpha A x + beta B x (A, B row-major M x N)
;; size: M=8192 N=8192
;; form: map over zip A B (row pairs); two dot products with at 0 bound with let; alpha*a + beta*b
;; data: data/gesummv.json
;; expect: [-2.875,4.671875,-2.734375,-2.6015625,2.171875,6.25]
(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (A B x alpha beta)
    (map (lambda (ab)
           (let a (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip (get #0 ab) x))))
             (let b (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip (get #1 ab) x))))
               (+ (* alpha a) (* beta b)))))
         (zip A B))))
