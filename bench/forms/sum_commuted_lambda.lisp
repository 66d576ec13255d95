;; sum: s = sum_i x_i
;; size: N=100000000
;; form: reduce with an inline commuted lambda (lambda (a b) (+ b a)); scalar result via at 0
;; data: data/sum.json
;; expect: [13.875]
(lift (N) ((array-type float N))
  (lambda (xs)
    (at 0 (reduce (lambda (a b) (+ b a)) 0.0f xs))))
