;; High-level filter then map: doubles the positive elements (an existential-length result).
;; data: hl_filter_map.json
;; expect: [2.0, 8.0, 1.0, 16.0, 6.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (map (lambda (x) (* x 2.0f)) (filter (lambda (x) (> x 0.0f)) xs))))
