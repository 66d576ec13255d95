;; Double precision: parameters, literals (`0.1d`) and arithmetic in 64-bit floats
;; (OpenCL's cl_khr_fp64). The sum would differ visibly in single precision.
;; data: double.json
;; expect: [1000000.1, 500000.1, 250000.1, 1.1]
(lift
  (N)
  ((array-type double N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (+ (* x 1000000.0d) 0.1d)) xs))))
