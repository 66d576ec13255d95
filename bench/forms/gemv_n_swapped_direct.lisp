;; gemv N: y = alpha A x + beta y (A row-major M x N)
;; size: M=8192 N=8192
;; form: zip y A (swapped) and zip x row; defined dot used directly: the one-element reduce result is mapped with the axpby lambda (commuted: beta*y + d*alpha), then join
;; data: data/gemv_n.json
;; expect: [5.046875,15.3203125,3.7890625,-4.8671875,3.65625,2.0546875]
(define (dot1 u v) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip u v))))
(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (A x y alpha beta)
    (join (map (lambda (yr)
                 (map (lambda (d) (+ (* beta (get #0 yr)) (* d alpha))) (dot1 x (get #1 yr))))
               (zip y A)))))
