;; A pair of filter results from two inputs of one length: the positive xs and the negative
;; ys, each with its own run-time length.
;; data: filter_results_pair.json
;; expect: [[1.0, 3.0, 5.0], [-1.0, -3.0, -5.0]]
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (tuple (filter (lambda (x) (> x 0.0f)) xs) (filter (lambda (y) (< y 0.0f)) ys))))
