;; Column sums of a row-major matrix: a `map` over the columns (`transpose m`), each a plain
;; reduction. Written independently of gemv T and atax, it has their shape, so the rewriter's
;; column-block reduction (`col-reduce-*`: work-groups of 32 columns × 8 row chunks, partial
;; sums meeting in local memory) applies; its kernel at symbolic sizes is the snapshot. The 16 × 64
;; input lets blocks of 32 columns and 8 row chunks divide it (smaller inputs would not).
;; data: col_sums.json
;; expect: [-0.5, -5.0, 1.5, 1.5, -2.75, -3.25, 4.0, 7.0, -7.0, 5.0, 2.25, 7.75, 6.0, 4.0, 2.5, 5.25, 1.25, 5.75, 1.25, 5.5, -8.5, -1.5, 3.5, -0.75, -8.25, -4.25, 0.25, 0.75, -8.25, -1.5, -2.75, 0.25, 0.25, -4.0, -5.5, -3.25, 5.25, 2.25, 5.0, 1.25, 0.25, -0.5, 1.5, 6.5, 8.25, 0.0, -5.75, -4.0, 4.25, 0.5, 2.0, 1.5, -3.25, -8.75, -7.5, 6.75, -3.75, 1.75, 3.25, -0.5, 0.5, -1.5, -7.75, 4.5]
(lift
  (R C)
  ((array-type (array-type float C) R))
  (lambda (m)
    (join (map (lambda (col) (reduce + 0.0f col)) (transpose m)))))
