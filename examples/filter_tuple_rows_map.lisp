;; A filter result of tuples holding arrays read by a map: the pairs whose row sums past 5 are
;; kept (the predicate reads the row in place), then each kept row is scaled by its weight,
;; read from the component buffers through views.
;; data: filter_glb_tuple_rows.json
;; expect: [[-6.0, -8.0], [15.0, 18.0], [0.0, 0.0], [45.0, 50.0]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (let kept (filter (lambda (p) (> (at 0 (reduce + 0.0f (get #1 p))) 5.0f)) (zip ws rows))
      (map (lambda (p) (map (lambda (x) (* x (get #0 p))) (get #1 p))) kept))))
