;; Naive matrix-matrix product C = A B: dimension 1 walks the rows of A, dimension 0 the
;; columns of B (the rows of `transpose b`, a view: no copy); each work-item computes one dot
;; product sequentially.
;; data: matmul.json
;; expect: [[10.0, -4.0, 6.0, 3.0], [5.0, -3.5, 0.25, 2.0]]
(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (mapGlb1
      (lambda (row)
        (join
          (mapGlb
            (lambda (col)
              (toGlobal
                (reduceSeq (lambda (acc p) (+ acc (* (get #0 p) (get #1 p))))
                           0.0f
                           (zip row col))))
            (transpose b))))
      a)))
