;; GEMV T as a user first writes it: the dot product zips the vector with the column
;; (`zip x col`), the operands in the other order from bench/cgo17/gemv_t.lisp.
;;   out[j] = alpha * sum_i x[i] a[i][j] + beta y[j]
(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (a x y alpha beta)
    (join
      (map (lambda (cy)
             (map (lambda (s) (+ (* alpha s) (* beta (get #1 cy))))
                  (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip x (get #0 cy))))))
           (zip (transpose a) y)))))
