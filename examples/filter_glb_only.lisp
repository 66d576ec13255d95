;; `filterGlb` alone: one kernel (ticket, scan, look-back, store), its result's length kept on the
;; device and read back with the data. The benchmark of the filter without a consumer.
;; data: filter_glb_only.json
;; expect: [0.75, 0.875, 1.0, 0.625]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))))
