;; `filterSeq` inside `mapGlb`: each row keeps its positive elements, so the result is an array
;; of existential arrays, each with its own run-time length (printed to that length).
;; data: filter_rows.json
;; expect: [[1.0, 2.0, 3.0], [], [0.5, 0.25, 0.125, 1.0, 2.0], [4.0]]
(lift
  (M N)
  ((array-type (array-type float N) M))
  (lambda (m)
    (mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) row)))
            m)))
