;; difffuzz case 1:40 (shrunk): wrong
;; what goes wrong: a high-level map over a reversed array runs as a variant that reads garbage (the rewriter's vectorized variant loads vectors of the reversed view; same family as asvector_of_reverse)
;; signature: different results
;; expected (interpreter) [1.5,2.5,-1.0,-3.25,0.75,4.0,0.0,-2.75]
;; observed (OpenCL)      [1.5,-12.793381,3.0617e-41,-0.0049448023,0.75,-3.25,-1.0,2.5]
;; (outside the float32 error bounds)
;; data: map_of_reverse.json
(lift
  (N)
  ((array-type float N))
  (lambda (ys) (map (lambda (x1) x1) (reverse ys))))
