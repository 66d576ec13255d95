;; `filterSeq` over rows whose length is a size variable, in each work-item: the result's rows
;; of rows are allocated at the C size of `M` (rows whose first element exceeds 5 are kept).
;; data: filter_seq_rows_sized.json
;; expect: [[], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (rows) (filterSeq (lambda (r) (> (at 0 r) 5.0f)) rows))
      (split #2 xs)))))
