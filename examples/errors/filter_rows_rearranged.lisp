;; An array of filter results is allocated row by row at the capacity of each row's filter input,
;; which the back end finds only from the map that produced the rows, not through `reverse`.
;; error: arrays of filter results only as the direct result of a map
(lift (M N) ((array-type (array-type float N) M))
  (lambda (m)
    (mapGlb (lambda (r) (toGlobal (mapSeq (lambda (x) (+ x 1.0f)) r)))
      (reverse (mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) row))) m)))))
