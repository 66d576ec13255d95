;; hand-edited from the derived 128x128-8x8-k16 variant: work-item j owns 8 consecutive columns 8j..8j+7 (two float4 at 8j, 8j+4) instead of 4j..4j+3 and 64+4j..64+4j+3
;; mapWrg1×mapWrg0 tiles of 128×128, 16×16 work-items each computing a 8×8 block in registers, K in steps of 16 staged in local memory, read as float4 | (rblock 128x128-8x8-k16 row (lam col (reduce @0 @1 (map @2 (zip row col)))) a (transpose b))
(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (toGlobal
      (join
        (mapWrg1
          (lambda (rows31)
            (map
              (lambda (z36) (join z36))
              (transpose
                (mapWrg
                  (lambda (cols32)
                    (join
                      (transpose
                        (map
                          (lambda (bl33)
                            (map
                              (lambda (q34)
                                (join q34))
                              (transpose bl33)))
                          (join
                            (reduceSeq
                              (lambda (acc10 tiles11)
                                (let la12
                                  (let k20
                                    (toLocal
                                      (let k19
                                        (let k18
                                          (let k17
                                            (let k16
                                              (let k15
                                                (let k14
                                                  (let k13
                                                    (let k12
                                                      (let k11
                                                        (let k10
                                                          (get #0 tiles11)
                                                          (map (lambda (p_2) (split #4 p_2)) k10))
                                                        (join k11))
                                                      (split #256 k12))
                                                    (transpose k13))
                                                  (split #16 k14))
                                                (mapLcl1
                                                  (lambda (cr14)
                                                    (mapLcl
                                                      (lambda (ce15)
                                                        (mapSeqUnroll
                                                          (lambda (q16)
                                                            (mapSeqUnroll
                                                              (lambda (x17) x17)
                                                              (asVector #4 q16)))
                                                          ce15))
                                                      cr14))
                                                  k15))
                                              (join k16))
                                            (transpose k17))
                                          (join k18))
                                        (join k19)))
                                    (split #4 k20))
                                  (let lb13
                                    (let k32
                                      (toLocal
                                        (let k31
                                          (let k30
                                            (let k29
                                              (let k28
                                                (let k27
                                                  (let k26
                                                    (let k25
                                                      (let k24
                                                        (let k23
                                                          (let k22
                                                            (let k21
                                                              (get #1 tiles11)
                                                              (transpose k21))
                                                            (map (lambda (p_3) (split #4 p_3)) k22))
                                                          (join k23))
                                                        (split #256 k24))
                                                      (transpose k25))
                                                    (split #16 k26))
                                                  (mapLcl1
                                                    (lambda (cr18)
                                                      (mapLcl
                                                        (lambda (ce19)
                                                          (mapSeqUnroll
                                                            (lambda (q20)
                                                              (mapSeqUnroll
                                                                (lambda (x21) x21)
                                                                (asVector #4 q20)))
                                                            ce19))
                                                        cr18))
                                                    k27))
                                                (join k28))
                                              (transpose k29))
                                            (join k30))
                                          (join k31)))
                                      (split #32 k32))
                                    (mapLcl1
                                      (lambda (ia23)
                                        (let k39
                                          (let k33
                                            (get #0 ia23)
                                            (zip
                                              k33
                                              (map
                                                (lambda (p_4) (split #4 p_4))
                                                (transpose
                                                  (map
                                                    (lambda (br24) (split #2 br24))
                                                    lb13)))))
                                          (mapLcl
                                            (lambda (jb25)
                                              (let k38
                                                (let k36
                                                  (get #0 jb25)
                                                  (let k37
                                                    (let k34
                                                      (get #1 ia23)
                                                      (let k35 (get #1 jb25) (zip k34 k35)))
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
                                                      k36
                                                      k37)))
                                                (join k38)))
                                            k39)))
                                      (zip
                                        acc10
                                        (map
                                          (lambda (ar22) (transpose ar22))
                                          (transpose (split #16 la12))))))))
                              (mapLcl1
                                (lambda (zr27)
                                  (mapLcl
                                    (lambda (blk28)
                                      (mapSeqUnroll
                                        (lambda (row29) (mapSeqUnroll (lambda (x30) x30) row29))
                                        blk28))
                                    zr27))
                                (split #16
                                  (split #8 (split #8 (generate #16384 (lambda (i26) 0.0f))))))
                              (zip
                                (transpose (map (lambda (p_5) (split #16 p_5)) rows31))
                                (transpose (map (lambda (p_6) (split #16 p_6)) cols32)))))))))
                  (split #128 (transpose b))))))
          (split #128 a))))))

