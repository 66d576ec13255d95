;; Float2 values staged in local memory, then folded in pairs by `reduceSeq` with a (float2, float)
;; accumulator: the lane-wise maximum and the sum of the first lanes.
;; data: reduce_tuple_vector_local.json
;; expect: [[[[3.0, 2.0], 4.0]], [[[7.0, 6.0], 12.0]], [[[2.0, 3.0], 2.0]], [[[4.0, 4.0], 3.0]]]
(lift
  (N)
  ((array-type (vector-type float 2) N))
  (lambda (vs)
    (join (mapWrg (lambda (g)
                    (toGlobal (mapLcl (lambda (c)
                                        (reduceSeq (lambda (acc p) (tuple (max (get #0 acc) p) (+ (get #1 acc) (vget #0 p))))
                                                   (tuple (vec -100.0f -100.0f) 0.0f)
                                                   c))
                                      (split #2 (toLocal (mapLcl (lambda (v) v) g))))))
                  (split #4 vs)))))
