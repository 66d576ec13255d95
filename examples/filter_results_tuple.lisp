;; A tuple of filter results as the program's result: the pairs of positive weight with their
;; rows (a struct of arrays), the weights' sum, and the doubled weights below 2. Each component
;; is stored as a result of its own, each filter result with its own run-time length.
;; data: filter_glb_tuple_rows.json
;; expect: [[[1.0, [1.0, 2.0]], [3.0, [5.0, 6.0]], [5.0, [9.0, 10.0]]], [7.0], [2.0, -4.0, 0.0]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (tuple (filterGlb (lambda (p) (> (get #0 p) 0.0f)) (zip ws rows))
           (reduce + 0.0f ws)
           (let ys (filter (lambda (w) (< w 2.0f)) ws) (map (lambda (y) (* y 2.0f)) ys)))))
