;; sum: s = sum_i x_i
;; size: N=100000000
;; form: strided partial sums: transpose of (split 256) gives 256 interleaved columns, each summed with a partially applied reduce, pipeline with o
;; data: data/sum.json
;; expect: [13.875]
(lift (N) ((array-type float N))
  (lambda (xs)
    (o (reduce + 0.0f) join (map (reduce + 0.0f)) transpose (split #256) xs)))
