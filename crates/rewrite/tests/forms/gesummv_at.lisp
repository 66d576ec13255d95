;; GESUMMV whose two dot products are taken with `at 0`.
;;   y[i] = alpha * sum_j a[i][j] x[j] + beta * sum_j b[i][j] x[j]
(define (dot xs ys) (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (a b x alpha beta)
    (map (lambda (rows) (+ (* alpha (dot (get #0 rows) x)) (* beta (dot (get #1 rows) x))))
         (zip a b))))
