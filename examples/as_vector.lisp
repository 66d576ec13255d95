;; `asVector #4` / `asScalar`: process the vector as float4 lanes; `*` works lane-wise and
;; broadcasts the scalar operand, as in OpenCL. N must be a multiple of 4.
;; data: as_vector.json
;; expect: [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (asScalar
      (toGlobal (mapGlb (lambda (v) (* v 2.0f)) (asVector #4 xs))))))
