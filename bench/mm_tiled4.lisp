(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (join
      (mapWrg1
        (lambda (rows)
          (map join
            (transpose
              (mapWrg0
                (lambda (cols)
                  (let la (toLocal (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) rows))
                    (let lb (transpose (toLocal (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (transpose cols))))
                      (mapLcl1
                        (lambda (row)
                          (join
                            (mapLcl0
                              (lambda (col)
                                (toGlobal
                                  (reduceSeq (lambda (acc p) (+ acc (* (get #0 p) (get #1 p))))
                                             0.0f
                                             (zip row col))))
                              lb)))
                        la))))
                (split #4 (transpose b))))))
        (split #4 a)))))
