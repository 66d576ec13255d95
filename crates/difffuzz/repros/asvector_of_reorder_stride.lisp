;; difffuzz case 1:293 (shrunk): wrong
;; what goes wrong: asVector #16 of a reorder-stride view: the vector loads ignore the permutation (silently wrong)
;; signature: different results
;; expected (interpreter) [[0.75,-2.75,-1.5,-1.0,4.0,2.0,3.75,3.25,2.0,-3.0,-3.25,0.0,0.75,-1.75,-2.0,-3.5]]
;; observed (OpenCL)      [[0.75,-1.5,4.0,3.75,2.0,-3.25,0.75,-2.0,-2.75,-1.0,2.0,3.25,-3.0,0.0,-1.75,-3.5]]
;; (outside the float32 error bounds)
;; data: asvector_of_reorder_stride.json
(lift
  (N)
  ((array-type float N))
  (lambda (zs) (o toGlobal (lambda (x1) x1) (asVector #16 (reorder-stride #8 zs)))))
