;; dot: s = sum_i x_i y_i
;; size: N=16777216
;; form: map a multiply over zip xs ys (get #0 * get #1), then reduce +
;; data: data/dot.json
;; expect: [36.203125]
(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))
