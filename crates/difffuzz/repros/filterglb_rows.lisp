;; difffuzz case 2026:95 (shrunk): internal
;; signature: internal: a view was read with too few indices
;; what goes wrong: filterGlb over the rows of a 2-D array: internal error 'a view was read with too few indices'
;; OpenCL side: internal: a view was read with too few indices
;; data: filterglb_rows.json
(lift
  (N)
  ((array-type float N))
  (lambda (zs) (filterGlb (lambda (x1) true) (split #2 zs))))
