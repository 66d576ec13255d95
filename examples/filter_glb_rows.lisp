;; `filterGlb` over rows: windows of `slide #3 #2` whose middle element is positive are kept
;; whole; the predicate reads each window in place and a kept window is copied row by row.
;; data: filter_glb_rows.json
;; expect: [[0.0, 1.0, -2.0], [4.0, 5.0, 0.0], [0.0, 7.0, 8.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (filterGlb (lambda (w) (> (at 1 w) 0.0f)) (slide #3 #2 xs))))
