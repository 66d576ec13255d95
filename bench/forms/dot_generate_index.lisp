;; dot: s = sum_i x_i y_i
;; size: N=16777216
;; form: index array from (generate N (lambda (i) i)); products read with (at i xs) (at i ys); reduce +
;; data: data/dot.json
;; expect: [36.203125]
(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (reduce + 0.0f
      (map (lambda (i) (* (at i xs) (at i ys))) (generate N (lambda (i) i))))))
