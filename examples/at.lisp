;; `at`: a gather through an index array; each work-item reads xs at an int index.
;; An index out of range would be a run-time error, never a silent read.
;; data: at.json
;; expect: [14.0, 10.0, 12.0, 12.0, 11.0, 13.0]
(lift
  (N M)
  ((array-type float N) (array-type int M))
  (lambda (xs idx)
    (toGlobal (mapGlb (lambda (i) (at i xs)) idx))))
