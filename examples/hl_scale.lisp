;; High-level vector scaling: only `map`; the rewriter finds tiled and vectorized variants.
;; data: hl_scale.json
;; expect: [1.5, 3.0, -4.5, 6.0, 0.75, 0.0, 12.0, -1.5, 3.0, 4.5, 6.0, 7.5, 9.0, 10.5, 12.0, 13.5]
(lift
  (N)
  (float (array-type float N))
  (lambda (alpha xs)
    (map (lambda (x) (* alpha x)) xs)))
