;; difffuzz case 2026:61 (shrunk): wrong
;; signature: different results
;; what goes wrong: asVector of a reversed array: the vector loads read the wrong elements (silently wrong result)
;; expected (interpreter) [[-3.25,-1.0],[-2.25,3.75],[2.0,0.5],[-0.25,-3.0]]
;; observed (OpenCL)      [[-3.25,0.0],[-2.25,-1.0],[2.0,3.75],[-0.25,0.5]]
;; (outside the float32 error bounds)
;; data: asvector_of_reverse.json
(lift
  (N)
  ((array-type float N))
  (lambda (xs) (mapGlb (lambda (c) c) (asVector #2 (reverse xs)))))
