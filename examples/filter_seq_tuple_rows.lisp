;; `filterSeq` of tuples holding arrays inside `mapGlb`: each work-item keeps the elements of
;; its row above 3, each paired with its one-element chunk and the row's first element, so the
;; result is rows of filter results: a buffer per component, each row at the capacity, and one
;; length a row.
;; data: filter_glb_tuple_rows.json
;; expect: [[], [[4.0, [[4.0], 3.0]]], [[5.0, [[5.0], 5.0]], [6.0, [[6.0], 5.0]]], [[7.0, [[7.0], 7.0]], [8.0, [[8.0], 7.0]]], [[9.0, [[9.0], 9.0]], [10.0, [[10.0], 9.0]]]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (mapGlb (lambda (r)
              (toGlobal (filterSeq (lambda (p) (> (get #0 p) 3.0f))
                                   (zip r (zip (split #1 r) (map (lambda (x) (at 0 r)) r))))))
            rows)))
