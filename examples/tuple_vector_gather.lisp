;; A gather of (float, double2) structs by `at`, then `if` between two tuples holding vectors.
;; A double2 member is 16-byte aligned: the float is followed by 12 bytes of padding.
;; data: tuple_vector_gather.json
;; expect: [[[5.0, 6.0], 3.5], [[2.0, 4.0], 7.0], [[3.0, 4.0], 2.5]]
(lift
  (N)
  ((array-type (tuple-type float (vector-type double 2)) N) (array-type int N))
  (lambda (ps ks)
    (toGlobal (mapGlb (lambda (k)
                        (let q (at k ps)
                          (if (> k 0) (tuple (get #1 q) (get #0 q)) (tuple (* (get #1 q) 2.0d) 7.0f))))
                      ks))))
