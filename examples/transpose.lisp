;; Transpose a matrix: `transpose` is a view, so the copy reads column-wise and writes row-wise.
;; data: transpose.json
;; expect: [[0.0, 4.0, 8.0], [1.0, 5.0, 9.0], [2.0, 6.0, 10.0], [3.0, 7.0, 11.0]]
(lift
  (M N)
  ((array-type (array-type float N) M))
  (lambda (m)
    (mapGlb (lambda (col) (toGlobal (mapSeq (lambda (x) x) col)))
            (transpose m))))
