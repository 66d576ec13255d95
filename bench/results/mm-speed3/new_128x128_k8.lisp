(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (toGlobal
      (join
        (mapWrg1
          (lambda (rows27)
            (map
              (lambda (z33) (join z33))
              (transpose
                (mapWrg
                  (lambda (cols28)
                    (join
                      (map
                        (lambda (z32) (join z32))
                        (transpose
                          (map
                            (lambda (p_5) (split #4 p_5))
                            (map
                              (lambda (bl29)
                                (map
                                  (lambda (q30)
                                    (join
                                      (map
                                        (lambda (z31) (join z31))
                                        (transpose (map (lambda (p_4) (split #4 p_4)) q30)))))
                                  (transpose bl29)))
                              (join
                                (reduceSeq
                                  (lambda (acc8 tiles9)
                                    (let la10
                                      (let k19
                                        (let k18
                                          (toLocal
                                            (let k17
                                              (let k16
                                                (let k15
                                                  (let k14
                                                    (let k13
                                                      (let k12
                                                        (let k11
                                                          (let k10
                                                            (let k9
                                                              (let k8
                                                                (let k7
                                                                  (let k6
                                                                    (let k5
                                                                      (get #0 tiles9)
                                                                      (transpose k5))
                                                                    (transpose k6))
                                                                  (join k7))
                                                                (split #256 k8))
                                                              (transpose k9))
                                                            (split #16 k10))
                                                          (mapLcl1
                                                            (lambda (cr12)
                                                              (mapLcl
                                                                (lambda (ce13)
                                                                  (mapSeqUnroll
                                                                    (lambda (x14) x14)
                                                                    ce13))
                                                                cr12))
                                                            k11))
                                                        (join k12))
                                                      (transpose k13))
                                                    (join k14))
                                                  (split #8 k15))
                                                (transpose k16))
                                              (join k17)))
                                          (asVector #4 k18))
                                        (split #32 k19))
                                      (let lb11
                                        (let k30
                                          (let k29
                                            (toLocal
                                              (let k28
                                                (let k27
                                                  (let k26
                                                    (let k25
                                                      (let k24
                                                        (let k23
                                                          (let k22
                                                            (let k21
                                                              (let k20
                                                                (get #1 tiles9)
                                                                (transpose k20))
                                                              (join k21))
                                                            (split #256 k22))
                                                          (transpose k23))
                                                        (split #16 k24))
                                                      (mapLcl1
                                                        (lambda (cr15)
                                                          (mapLcl
                                                            (lambda (ce16)
                                                              (mapSeqUnroll (lambda (x17) x17) ce16))
                                                            cr15))
                                                        k25))
                                                    (join k26))
                                                  (transpose k27))
                                                (join k28)))
                                            (asVector #4 k29))
                                          (split #32 k30))
                                        (mapLcl1
                                          (lambda (ia19)
                                            (let k37
                                              (let k31
                                                (get #0 ia19)
                                                (zip
                                                  k31
                                                  (transpose
                                                    (map
                                                      (lambda (br20) (transpose (split #16 br20)))
                                                      lb11))))
                                              (mapLcl
                                                (lambda (jb21)
                                                  (let k36
                                                    (let k34
                                                      (get #0 jb21)
                                                      (let k35
                                                        (let k32
                                                          (get #1 ia19)
                                                          (let k33 (get #1 jb21) (zip k32 k33)))
                                                        (reduceSeqUnroll
                                                          (lambda (c0 kq1)
                                                            (let ap2
                                                              (toPrivate
                                                                (let k1
                                                                  (get #0 kq1)
                                                                  (mapSeqUnroll (lambda (x4) x4) k1)))
                                                              (let bp3
                                                                (toPrivate
                                                                  (let k2
                                                                    (get #1 kq1)
                                                                    (mapSeqUnroll
                                                                      (lambda (x5) x5)
                                                                      k2)))
                                                                (mapSeqUnroll
                                                                  (lambda (cr6)
                                                                    (let k4
                                                                      (let k3
                                                                        (get #0 cr6)
                                                                        (zip k3 (asScalar bp3)))
                                                                      (mapSeqUnroll
                                                                        (lambda (p7)
                                                                          (let p1
                                                                            (get #0 p7)
                                                                            (let p2
                                                                              (let p
                                                                                (tuple
                                                                                  (get #1 cr6)
                                                                                  (get #1 p7))
                                                                                (*
                                                                                  (get #0 p)
                                                                                  (get #1 p)))
                                                                              (+ p1 p2))))
                                                                        k4)))
                                                                  (zip c0 (asScalar ap2))))))
                                                          k34
                                                          k35)))
                                                    (join k36)))
                                                k37)))
                                          (zip
                                            acc8
                                            (transpose
                                              (map
                                                (lambda (ar18) (transpose (split #16 ar18)))
                                                la10)))))))
                                  (mapLcl1
                                    (lambda (zr23)
                                      (mapLcl
                                        (lambda (blk24)
                                          (mapSeqUnroll
                                            (lambda (row25) (mapSeqUnroll (lambda (x26) x26) row25))
                                            blk24))
                                        zr23))
                                    (split #16
                                      (split #8 (split #8 (generate #16384 (lambda (i22) 0.0f))))))
                                  (zip
                                    (transpose (map (lambda (p_2) (split #8 p_2)) rows27))
                                    (transpose (map (lambda (p_3) (split #8 p_3)) cols28)))))))))))
                  (split #128 (transpose b))))))
          (split #128 a))))))
