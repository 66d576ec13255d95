;; sum: s = sum_i x_i
;; size: N=100000000
;; form: partial sums of contiguous chunks of 128 (split, map reduce, join), then the sum of the partial sums; defined add helper
;; data: data/sum.json
;; expect: [13.875]
(define (add a b) (+ a b))
(lift (N) ((array-type float N))
  (lambda (xs)
    (let partials (join (map (lambda (chunk) (reduce add 0.0f chunk)) (split #128 xs)))
      (reduce add 0.0f partials))))
