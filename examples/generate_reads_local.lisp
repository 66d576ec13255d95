;; A `generate` inside a work-group reads, with `at`, the row sums its group has just stored in
;; local memory: its C function takes the local buffer as an argument. One row a group, so
;; each result is its row's sum plus 1.
;; data: filter_glb_tuple_rows.json
;; expect: [4.0, 8.0, 12.0, 16.0, 20.0]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (join (mapWrg (lambda (blk)
      (let t (toLocal (mapLcl (lambda (r) (toPrivate (reduceSeq + 0.0f r))) blk))
        (toGlobal (mapLcl (lambda (g) g) (generate #1 (lambda (i) (let y (at 0 (at i t)) (+ y 1.0f))))))))
      (split #1 rows)))))
