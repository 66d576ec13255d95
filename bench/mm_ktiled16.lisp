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
                  (join
                    (reduceSeq
                      (lambda (acc tiles)
                        (let la (toLocal (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (get #0 tiles)))
                          (let lb (transpose (toLocal (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r))
                                                               (transpose (get #1 tiles)))))
                            (mapLcl1
                              (lambda (ar)
                                (join (mapLcl0
                                  (lambda (ab)
                                    (reduceSeq (lambda (s p) (+ s (* (get #0 p) (get #1 p))))
                                               (get #0 ab)
                                               (zip (get #1 ar) (get #1 ab))))
                                  (zip (get #0 ar) lb))))
                              (zip acc la)))))
                      (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (split #16 (generate #256 (lambda (i) 0.0f))))
                      (zip (transpose (map (split #16) rows)) (transpose (map (split #16) cols))))))
                (split #16 (transpose b))))))
        (split #16 a)))))
