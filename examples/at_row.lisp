;; `at` of a 2-D array picks a row, which stays a view of the matrix read at the checked index
;; (it was an internal "a buffer was read with too few indices"); each work-item doubles one row.
;; data: at_row.json
;; expect: [[6.0, 8.0], [2.0, 4.0], [6.0, 8.0]]
(lift
  (M N K)
  ((array-type (array-type float M) N) (array-type int K))
  (lambda (m is)
    (toGlobal (mapGlb (lambda (i) (toGlobal (mapSeq (lambda (x) (* x 2.0f)) (at i m)))) is))))
