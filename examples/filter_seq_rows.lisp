;; `filterSeq` over rows in each work-item: a kept row is copied element by element to its
;; place in the work-item's filter result (rows whose second element exceeds 5).
;; data: filter_seq_rows.json
;; expect: [[], [[5.0, 6.0], [7.0, 8.0]], [[9.0, 10.0], [11.0, 12.0]], [[13.0, 14.0], [15.0, 16.0]]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (rows) (filterSeq (lambda (r) (> (at 1 r) 5.0f)) rows))
      (split #2 (split #2 xs))))))
