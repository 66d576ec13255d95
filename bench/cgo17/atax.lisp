;; ATAX (Polybench): y = A^T (A x), A row-major M x N: a matrix-vector product, then a
;; transposed one on its result.
;;   tmp[i] = sum_j a[i][j] x[j];   y[j] = sum_i a[i][j] tmp[i]
;; CGO'17 large size: 8192 x 8192 (--size M=8192 --size N=8192); timed as GEMV N + GEMV T.
;; data: atax.json
;; expect: [-10.09375, -5.71875, -11.171875, -5.0, -9.09375, 9.8125, -8.453125]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N))
  (lambda (a x)
    (let tmp (join (map (lambda (row) (dot-product row x)) a))
      (join (map (lambda (col) (dot-product col tmp)) (transpose a))))))
