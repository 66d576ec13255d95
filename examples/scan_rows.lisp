;; A row-wise inclusive prefix sum (`map (scan + 0) rows`, a running total along each row) of a
;; 5 × 12 matrix of quarters.
;; data: scan_rows.json
;; expect: [[-3.5, -5.75, -6.75, -6.5, -5.0, -2.25, -5.5, -7.5, -8.25, -7.75, -6.0, -3.0], [-3.0, -4.75, -5.25, -4.5, -2.5, 0.75, -2.0, -3.5, -3.75, -2.75, -0.5, 3.0], [-2.5, -3.75, -3.75, -2.5, 0.0, -3.5, -5.75, -6.75, -6.5, -5.0, -2.25, -5.5], [-2.0, -2.75, -2.25, -0.5, 2.5, -0.5, -2.25, -2.75, -2.0, 0.0, 3.25, 0.5], [-1.5, -1.75, -0.75, 1.5, 5.0, 2.5, 1.25, 1.25, 2.5, 5.0, 1.5, -0.75]]
(lift
  (N M)
  ((array-type (array-type float M) N))
  (lambda (m) (map (lambda (row) (scan + 0.0f row)) m)))
