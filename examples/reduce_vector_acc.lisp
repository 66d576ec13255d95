;; Per-chunk sums of float4 values: `reduceSeq` with a vector accumulator.
;; data: reduce_vector_acc.json
;; expect: [[6.0, 8.0, 10.0, 12.0], [9.0, 11.0, 11.0, 13.0], [-0.5, 2.5, -2.5, 4.5]]
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (vs)
    (join (mapGlb (lambda (c) (toGlobal (reduceSeq + (vec 0.0f 0.0f 0.0f 0.0f) c)))
                  (split #2 vs)))))
