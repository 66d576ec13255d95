;; A host program's value that is a tuple: a loop's state beside a filter of rows (pairs of a
;; clamped, padded array kept where their first element is below 5). The filter's component
;; comes back as rows of the counted length.
;; Expected by hand: zs + 1; the pairs of (0 0 0 1 2 3 4 5 6 7) are (0 0) (0 1) (2 3) (4 5) (6 7).
;; data: host_tuple_filter_rows.json
;; expect: [[1, 2, 3, 4, 5, 6, 7, 8], [[0, 0], [0, 1], [2, 3], [4, 5]]]
(lift
  (N)
  ((array-type int N))
  (lambda (zs)
    (tuple
      (iterate #1 (lambda (s) (toGlobal (mapGlb (lambda (x) (+ x 1)) s))) zs)
      (filter (lambda (w) (< (at 0 w) 5)) (slide #2 #2 (pad-clamp #2 #0 zs))))))
