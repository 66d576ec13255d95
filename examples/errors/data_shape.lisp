;; The parameter is a matrix, but the data is a flat array.
;; data: data_shape.json
;; error-at: run
;; error: m
(lift (M N) ((array-type (array-type float N) M))
  (lambda (m) (mapGlb (lambda (row) (toGlobal (mapSeq (lambda (x) x) row))) m)))
