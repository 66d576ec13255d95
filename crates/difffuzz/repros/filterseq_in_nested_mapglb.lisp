;; difffuzz case 1:1356 (shrunk): internal
;; signature: internal: filter without a length destination
;; what goes wrong: filterSeq per element of a mapGlb nested in mapGlb2 (an array of existential arrays two levels deep): internal error 'filter without a length destination'
;; OpenCL side: internal: filter without a length destination
;; data: filterseq_in_nested_mapglb.json
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (mapGlb2 (lambda (row3) (mapGlb (lambda (x1) (filterSeq (lambda (x2) true) x1)) row3)) (slide #2 #2 (split M xs)))))
