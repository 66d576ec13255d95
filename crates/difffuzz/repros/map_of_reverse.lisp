;; difffuzz case 1:40 (shrunk): wrong
;; signature: different results
;; what goes wrong: a high-level map over a reversed array runs as the rewriter's vectorized variant, whose vload4 of the reversed view reads the wrong elements (same family as asvector_of_reverse)
;; expected (interpreter) [7.0,6.0,5.0,4.0,3.0,2.0,1.0,0.0]
;; observed (OpenCL)      [7.0,-2.5595772e-23,3.0674e-41,0.0,3.0,4.0,5.0,6.0]
;; (outside the float32 error bounds)
;; data: map_of_reverse.json
(lift
  (N)
  ((array-type float N))
  (lambda (ys) (map (lambda (x1) x1) (reverse ys))))
