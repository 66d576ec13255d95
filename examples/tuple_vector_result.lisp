;; A result of tuples of vectors: each float4 is a member of the result struct.
;; data: tuple_vector_result.json
;; expect: [[[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0]], [[5.0, 6.0, 7.0, 8.0], [10.0, 12.0, 14.0, 16.0]], [[-1.0, 0.5, 0.0, 2.5], [-2.0, 1.0, 0.0, 5.0]]]
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (v) (tuple v (* v 2.0f))) xs))))
