;; GEMV N: CLBlast's matrix-vector product, y = alpha A x + beta y (A row-major, M x N).
;;   out[i] = alpha * sum_j a[i][j] x[j] + beta y[i]
;; CGO'17 large size: 8192 x 8192 (--size M=8192 --size N=8192).
;; data: gemv_n.json
;; expect: [3.375, 1.1875, 6.4375, -2.46875, 2.875]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N) (array-type float M) float float)
  (lambda (a x y alpha beta)
    (join
      (map (lambda (row-y)
             (map (lambda (s) (+ (* alpha s) (* beta (get #1 row-y))))
                  (dot-product (get #0 row-y) x)))
           (zip a y)))))
