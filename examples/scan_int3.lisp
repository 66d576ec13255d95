;; A device-wide scan (`scanGlb`) of 3-vectors of ints, from a start vector: each tile's
;; aggregate and prefix travel through the look-back as the vector's three lanes (a 3-vector
;; takes four lanes of storage; its fourth is padding that the look-back must not move).
;; Expected by hand: (-1 2 -1) plus the running sums of (3 -1 4), (1 -5 9), (2 -6 5), (3 -5 8).
;; data: scan_int3.json
;; expect: [[2, 1, 3], [3, -4, 12], [5, -10, 17], [8, -15, 25]]
(lift
  (N)
  ((array-type int N))
  (lambda (ys) (toGlobal (scanGlb + (vec -1 2 -1) (asVector #3 ys)))))
