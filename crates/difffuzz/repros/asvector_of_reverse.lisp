;; difffuzz case 2026:61 (shrunk): wrong
;; signature: different results
;; what goes wrong: asVector of a reversed array: the vector loads read the wrong elements (silently wrong result)
;; expected (interpreter) [[7.0,6.0],[5.0,4.0],[3.0,2.0],[1.0,0.0]]
;; observed (OpenCL)      [[7.0,0.0],[5.0,6.0],[3.0,4.0],[1.0,2.0]]
;; (outside the float32 error bounds)
;; data: asvector_of_reverse.json
(lift
  (N)
  ((array-type float N))
  (lambda (xs) (mapGlb (lambda (c) c) (asVector #2 (reverse xs)))))
