;; Per-chunk sum and count of float4 values: `reduceSeq` whose accumulator is a tuple holding
;; a vector, kept in private memory and stored as a (float4, float) struct.
;; data: reduce_tuple_vector_acc.json
;; expect: [[[15.0, 18.0, 21.0, 24.0], 3.0], [[-0.5, 3.5, -2.5, 5.5], 3.0]]
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (vs)
    (join (mapGlb (lambda (c)
                    (toGlobal (reduceSeq (lambda (acc p) (tuple (+ (get #0 acc) p) (+ (get #1 acc) 1.0f)))
                                         (tuple (vec 0.0f 0.0f 0.0f 0.0f) 0.0f)
                                         c)))
                  (split #3 vs)))))
