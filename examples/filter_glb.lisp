;; `filterGlb` across all work-items (predicate, prefix sum, scatter) on 40 elements, its result
;; passed straight to `mapGlb` (pack/unpack inserted by the compiler). Order is preserved.
;; data: filter_glb.json
;; expect: [96.0, 98.5, 96.5, 99.0, 97.0, 99.5, 97.5, 98.0, 96.0, 98.5, 96.5, 99.0, 97.0, 99.5, 97.5, 98.0, 96.0, 98.5, 96.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb (lambda (x) (+ x 100.0f))
              (toGlobal (filterGlb (lambda (x) (< x 0.0f)) xs))))))
