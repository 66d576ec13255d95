;; Tuples holding vectors as input, global intermediate and result. The structs have OpenCL C's
;; natural layout, which the host's encoding must follow: a float4 after a float starts at byte
;; 16, and a float3 member takes 16 bytes.
;; data: tuple_vector_layout.json
;; expect: [[[4.0, 6.0, 8.0, 10.0], [2.0, 1.0, 2.0], 2.0], [[3.0, 3.5, 4.0, 4.5], [0.5, 1.0, 2.0], 0.5], [[-1.0, -2.0, 1.0, -4.0], [-1.0, 1.0, 2.0], -1.0]]
(lift
  (N)
  ((array-type (tuple-type float (vector-type float 4)) N))
  (lambda (ps)
    (let t (toGlobal (mapGlb (lambda (p) (tuple (get #0 p) (* (get #1 p) (get #0 p)) (vec (get #0 p) 1.0f 2.0f))) ps))
      (toGlobal (mapGlb (lambda (q) (tuple (+ (get #1 q) (get #0 q)) (get #2 q) (get #0 q))) t)))))
