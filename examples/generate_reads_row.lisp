;; In each work-item, a `generate` whose function binds with `let` reads the work-item's row
;; with `at`: its C function takes the input buffer and the work-item's index, under their
;; kernel names, as arguments. Sums the squares of each row's first two elements.
;; data: filter_glb_tuple_rows.json
;; expect: [[5.0], [25.0], [61.0], [113.0], [181.0]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (toGlobal (mapGlb (lambda (r)
      (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f
        (generate #2 (lambda (i) (let y (at i r) (* y y)))))))
      rows))))
