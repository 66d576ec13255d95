;; ATAX with the dot product defined as the element of its one-element reduction (`at 0`),
;; the intermediate vector bound with `let`.
;;   tmp[i] = sum_j a[i][j] x[j];   y[j] = sum_i a[i][j] tmp[i]
(define (dot xs ys) (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))

(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N))
  (lambda (a x)
    (let tmp (map (lambda (row) (dot row x)) a)
      (map (lambda (col) (dot col tmp)) (transpose a)))))
