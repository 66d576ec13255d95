;; High-level sum: one `reduce`; the rewriter splits it into per-chunk partial sums (a first
;; kernel) and a final sum (a second kernel).
;; data: hl_sum.json
;; expect: [46.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f xs)))
