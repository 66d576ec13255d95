;; `filterSeq` bound by `let` in the body of `mapSeqUnroll`: each unrolled copy binds the
;; filter result's length again in the block the copies share (the sums of each row's positive
;; elements, two rows a work-item).
;; data: filter_seq_unrolled.json
;; expect: [[3.0, 4.0], [0.0, 7.5]]
(lift
  (N M)
  ((array-type (array-type float M) N))
  (lambda (rows)
    (mapGlb (lambda (c)
      (toGlobal (mapSeqUnroll (lambda (r)
        (let ys (filterSeq (lambda (x) (> x 0.0f)) r) (at 0 (reduceSeq + 0.0f ys)))) c)))
      (split #2 rows))))
