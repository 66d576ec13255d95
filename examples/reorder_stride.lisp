;; `reorder-stride #s`: element i reads xs[i/(N/s) + s*(i%(N/s))] (Lift's reorderStride), the
;; order in which coalesced accesses of s work-items walk an array.
;; With s = 2 and N = 8: 0 2 4 6 1 3 5 7.
;; data: reorder_stride.json
;; expect: [0.0, 2.0, 4.0, 6.0, 1.0, 3.0, 5.0, 7.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) x) (reorder-stride #2 xs)))))
