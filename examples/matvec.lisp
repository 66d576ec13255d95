;; Matrix-vector product: one work-item per row folds `zip row x` with a multiply-add.
;; data: matvec.json
;; expect: [1.0, -2.0, -1.0, -0.25]
(lift
  (M N)
  ((array-type (array-type float N) M) (array-type float N))
  (lambda (m x)
    (join
      (mapGlb
        (lambda (row)
          (toGlobal
            (reduceSeq (lambda (acc p) (+ acc (* (get #0 p) (get #1 p))))
                       0.0f
                       (zip row x))))
        m))))
