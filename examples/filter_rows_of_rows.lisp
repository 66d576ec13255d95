;; Rows of rows of filter results: each work-item of a two-dimensional grid keeps the elements
;; above 4 of one window of two of its row, so the result has a run-time length per window of
;; each row (stored at the windows' capacity with a lengths buffer of the same shape).
;; data: filter_rows_of_rows.json
;; expect: [[[], [], [], [], [6.0]], [[7.0, 8.0], [8.0], [10.0], [10.0, 11.0], [11.0]], [[], [], [], [], []]]
(lift
  (N M)
  ((array-type (array-type float M) N))
  (lambda (rows)
    (toGlobal (mapGlb1 (lambda (r)
      (mapGlb (lambda (w) (toGlobal (filterSeq (lambda (x) (> x 4.0f)) w))) (slide #2 #1 r)))
      rows))))
