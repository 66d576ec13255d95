;; The parameter is a matrix, but the data is a flat array.
;; data: data_shape.json
;; error-at: run
;; error: m[0]: expected an array ([float]N), found the number 1.0
(lift (M N) ((array-type (array-type float N) M))
  (lambda (m) (mapGlb (lambda (row) (toGlobal (mapSeq (lambda (x) x) row))) m)))
