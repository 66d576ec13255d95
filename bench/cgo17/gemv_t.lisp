;; GEMV T: CLBlast's transposed matrix-vector product, y = alpha A^T x + beta y (A row-major,
;; M x N; a column of A is a row of A^T).
;;   out[j] = alpha * sum_i a[i][j] x[i] + beta y[j]
;; CGO'17 large size: 8192 x 8192 (--size M=8192 --size N=8192).
;; data: gemv_t.json
;; expect: [-0.1875, -6.5625, 3.90625, -3.84375, 0.09375, 1.90625, -1.3125]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (a x y alpha beta)
    (join
      (map (lambda (col-y)
             (map (lambda (s) (+ (* alpha s) (* beta (get #1 col-y))))
                  (dot-product (get #0 col-y) x)))
           (zip (transpose a) y)))))
