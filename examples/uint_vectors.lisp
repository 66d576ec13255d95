;; Vectors of unsigned integers: asVector turns uint arrays into uint4 (and ulong arrays into
;; ulong2), bit operations work lane-wise with a scalar operand broadcast, and shift and
;; rotate counts may be a vector (one count per lane) or a scalar. OpenCL types uint4, ulong2.
;; Expected values: scripts/int_examples.py (numpy).
;; data: uint_vectors.json
;; expect: [[8, 16, 24, 32, 2147483648, 536870916, 56, 64], [[65534, 65533, 65532, 65531], [0, 65535, 65528, 65527]], [2305843009213693954, 4611686018427387904, 6917529027641081862, 9223372036854775808, 18446744073709551613, 1152921504606846976, 16140901064495857678, 6154895881081708890]]
(lift
  (N)
  ((array-type uint N) (array-type ulong N))
  (lambda (us ls)
    (tuple
      (toGlobal
        (asScalar (mapGlb (lambda (v) (bit-xor (rotl v 3) (shr v (vec 1u 2u 3u 31u)))) (asVector #4 us))))
      (toGlobal (mapGlb (lambda (v) (bit-and (bit-not v) 0xffffu)) (asVector #4 us)))
      (toGlobal (asScalar (mapGlb (lambda (v) (+ (rotl v 61) (shl v (vec 1ul 63ul)))) (asVector #2 ls)))))))
