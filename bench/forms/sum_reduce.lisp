;; sum: s = sum_i x_i
;; size: N=100000000
;; form: one reduce with the + operator passed directly
;; data: data/sum.json
;; expect: [13.875]
(lift (N) ((array-type float N))
  (lambda (xs) (reduce + 0.0f xs)))
