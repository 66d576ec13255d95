;; A tuple of rows of filter results and a filter result: each row keeps its elements above 2
;; (a length per row), and the rows whose first element is positive are kept whole (one
;; length). The lengths buffer holds a row of lengths for each component that has them.
;; data: filter_glb_tuple_rows.json
;; expect: [[[], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (tuple (mapGlb (lambda (r) (toGlobal (filterSeq (lambda (x) (> x 2.0f)) r))) rows)
           (filter (lambda (r) (> (at 0 r) 0.0f)) rows))))
