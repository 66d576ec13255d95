;; `filterGlb` of tuples holding arrays: each weight is paired with its row of a matrix, and the
;; pairs of positive weight are kept. The kept pairs are stored as a struct of arrays, one
;; compacted buffer per component (the weights, the rows) with the one run-time length.
;; data: filter_glb_tuple_rows.json
;; expect: [[1.0, [1.0, 2.0]], [3.0, [5.0, 6.0]], [5.0, [9.0, 10.0]]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (filterGlb (lambda (p) (> (get #0 p) 0.0f)) (zip ws rows))))
