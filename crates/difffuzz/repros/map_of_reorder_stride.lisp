;; difffuzz case 1:546 (shrunk): wrong
;; signature: different results
;; what goes wrong: a high-level map over a reorder-stride view runs as the rewriter's vectorized variant, whose vector loads ignore the permutation (same family as asvector_of_reorder_stride)
;; expected (interpreter) [0.0,4.0,1.0,5.0,2.0,6.0,3.0,7.0]
;; observed (OpenCL)      [0.0,1.0,2.0,3.0,2.0,3.0,4.0,5.0]
;; (outside the float32 error bounds)
;; data: map_of_reorder_stride.json
(lift
  (N)
  ((array-type float N))
  (lambda (ys) (map (lambda (x1) x1) (reorder-stride #4 ys))))
