(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (toGlobal
      (join
        (mapWrg1
          (lambda (rows29)
            (map
              (lambda (z34) (join z34))
              (transpose
                (mapWrg
                  (lambda (cols30)
                    (join
                      (transpose
                        (map
                          (lambda (bl31)
                            (map
                              (lambda (q32)
                                (join
                                  (map
                                    (lambda (z33) (join z33))
                                    (transpose (map (lambda (p_5) (split #4 p_5)) q32)))))
                              (transpose bl31)))
                          (join
                            (reduceSeq
                              (lambda (acc10 tiles11)
                                (let la12
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
                                                      (let k10 (get #0 tiles11) (join k10))
                                                      (split #256 k11))
                                                    (transpose k12))
                                                  (split #16 k13))
                                                (mapLcl1
                                                  (lambda (cr14)
                                                    (mapLcl
                                                      (lambda (ce15)
                                                        (mapSeqUnroll (lambda (x16) x16) ce15))
                                                      cr14))
                                                  k14))
                                              (join k15))
                                            (transpose k16))
                                          (join k17)))
                                      (asVector #4 k18))
                                    (split #4 k19))
                                  (let lb13
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
                                                          (let k20 (get #1 tiles11) (transpose k20))
                                                          (join k21))
                                                        (split #256 k22))
                                                      (transpose k23))
                                                    (split #16 k24))
                                                  (mapLcl1
                                                    (lambda (cr17)
                                                      (mapLcl
                                                        (lambda (ce18)
                                                          (mapSeqUnroll (lambda (x19) x19) ce18))
                                                        cr17))
                                                    k25))
                                                (join k26))
                                              (transpose k27))
                                            (join k28)))
                                        (asVector #4 k29))
                                      (split #16 k30))
                                    (mapLcl1
                                      (lambda (ia21)
                                        (let k37
                                          (let k31
                                            (get #0 ia21)
                                            (zip
                                              k31
                                              (map
                                                (lambda (p_2) (split #4 p_2))
                                                (transpose
                                                  (map
                                                    (lambda (br22) (transpose (split #16 br22)))
                                                    lb13)))))
                                          (mapLcl
                                            (lambda (jb23)
                                              (let k36
                                                (let k34
                                                  (get #0 jb23)
                                                  (let k35
                                                    (let k32
                                                      (get #1 ia21)
                                                      (let k33 (get #1 jb23) (zip k32 k33)))
                                                    (reduceSeqUnroll
                                                      (lambda (c6 kp7)
                                                        (let ap8
                                                          (toPrivate
                                                            (let k6
                                                              (get #0 kp7)
                                                              (mapSeqUnroll (lambda (x9) x9) k6)))
                                                          (let k9
                                                            (let k8
                                                              (let k7
                                                                (get #1 kp7)
                                                                (zip
                                                                  (transpose
                                                                    (split #4 (asScalar ap8)))
                                                                  k7))
                                                              (reduceSeqUnroll
                                                                (lambda (c0 kq1)
                                                                  (let bp2
                                                                    (toPrivate
                                                                      (let k1
                                                                        (get #1 kq1)
                                                                        (mapSeqUnroll
                                                                          (lambda (x3) x3)
                                                                          k1)))
                                                                    (let k5
                                                                      (let k2
                                                                        (get #0 kq1)
                                                                        (zip c0 k2))
                                                                      (mapSeqUnroll
                                                                        (lambda (cr4)
                                                                          (let k4
                                                                            (let k3
                                                                              (get #0 cr4)
                                                                              (zip
                                                                                k3
                                                                                (asScalar bp2)))
                                                                            (mapSeqUnroll
                                                                              (lambda (p5)
                                                                                (let p1
                                                                                  (get #0 p5)
                                                                                  (let p2
                                                                                    (let p
                                                                                      (tuple
                                                                                        (get #1 cr4)
                                                                                        (get #1 p5))
                                                                                      (*
                                                                                        (get #0 p)
                                                                                        (get #1 p)))
                                                                                    (+ p1 p2))))
                                                                              k4)))
                                                                        k5))))
                                                                c6
                                                                k8))
                                                            (join k9))))
                                                      k34
                                                      k35)))
                                                (join k36)))
                                            k37)))
                                      (zip
                                        acc10
                                        (map
                                          (lambda (ar20) (transpose ar20))
                                          (transpose (split #16 la12))))))))
                              (mapLcl1
                                (lambda (zr25)
                                  (mapLcl
                                    (lambda (blk26)
                                      (mapSeqUnroll
                                        (lambda (row27) (mapSeqUnroll (lambda (x28) x28) row27))
                                        blk26))
                                    zr25))
                                (split #16
                                  (split #8 (split #4 (generate #8192 (lambda (i24) 0.0f))))))
                              (zip
                                (transpose (map (lambda (p_3) (split #16 p_3)) rows29))
                                (transpose (map (lambda (p_4) (split #16 p_4)) cols30)))))))))
                  (split #64 (transpose b))))))
          (split #128 a))))))
