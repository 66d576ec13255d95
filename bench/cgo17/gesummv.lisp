;; GESUMMV (Polybench): y = alpha A x + beta B x, A and B row-major M x N.
;;   y[i] = alpha * sum_j a[i][j] x[j] + beta * sum_j b[i][j] x[j]
;; CGO'17 large size: 8192 x 8192 (--size M=8192 --size N=8192); timed as 2 x GEMV N.
;; data: gesummv.json
;; expect: [1.96875, -2.25, 7.65625, -0.21875, 0.59375]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (a b x alpha beta)
    (join
      (map (lambda (rows)
             (map (lambda (s) (+ (* alpha (get #0 s)) (* beta (get #1 s))))
                  (zip (dot-product (get #0 rows) x) (dot-product (get #1 rows) x))))
           (zip a b)))))
