;; A sum whose operator is written `(lambda (a b) (+ b a))`, its one-element result mapped.
;;   s = sum_i xs[i]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (map (lambda (s) s) (reduce (lambda (a b) (+ b a)) 0.0f xs))))
