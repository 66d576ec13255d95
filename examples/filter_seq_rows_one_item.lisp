;; `filterSeq` over rows outside every map: one work-item keeps the rows whose first and last
;; elements add up to more than 10.
;; data: filter_seq_rows.json
;; expect: [[5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (filterSeq (lambda (r) (> (+ (at 0 r) (at 3 r)) 10.0f)) (split #4 xs)))))
