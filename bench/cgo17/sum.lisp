;; Sum: the reference reduction kernel, the sum of a vector.
;;   s = sum_i xs[i]
;; CGO'17 large size: 10^8 floats (--size N=100000000).
;; data: sum.json
;; expect: [3.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f xs)))
