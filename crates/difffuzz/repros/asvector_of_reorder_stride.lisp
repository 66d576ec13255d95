;; difffuzz case 1:293 (shrunk): wrong
;; signature: different results
;; what goes wrong: asVector #16 of a reorder-stride view: the vector loads ignore the permutation (silently wrong)
;; expected (interpreter) [[0.0,8.0,1.0,9.0,2.0,10.0,3.0,11.0,4.0,12.0,5.0,13.0,6.0,14.0,7.0,15.0]]
;; observed (OpenCL)      [[0.0,1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0,12.0,13.0,14.0,15.0]]
;; (outside the float32 error bounds)
;; data: asvector_of_reorder_stride.json
(lift
  (N)
  ((array-type float N))
  (lambda (zs) (o toGlobal (lambda (x1) x1) (asVector #16 (reorder-stride #8 zs)))))
