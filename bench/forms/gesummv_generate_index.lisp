;; gesummv: y = alpha A x + beta B x (A, B row-major M x N)
;; size: M=8192 N=8192
;; form: explicit indices (generate M, generate N, at) and a tuple reduce accumulating both sums at once
;; data: data/gesummv.json
;; expect: [-2.875,4.671875,-2.734375,-2.6015625,2.171875,6.25]
(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (A B x alpha beta)
    (map (lambda (i)
           (let s (at 0 (reduce (lambda (u v) (tuple (+ (get #0 u) (get #0 v)) (+ (get #1 u) (get #1 v))))
                                (tuple 0.0f 0.0f)
                                (map (lambda (j) (tuple (* (at j (at i A)) (at j x)) (* (at j (at i B)) (at j x))))
                                     (generate N (lambda (j) j)))))
             (+ (* alpha (get #0 s)) (* beta (get #1 s)))))
         (generate M (lambda (i) i)))))
