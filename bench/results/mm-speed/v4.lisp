;; hand-written: float4 local reads as derived, but the tiles copied from global memory element by element (scalar loads)
(define (staged flat)
  (join (transpose (join
    (mapLcl1 (lambda (r) (mapLcl0 (lambda (e) (mapSeqUnroll (lambda (x) x) e)) r))
             (split #16 (transpose (split #256 flat))))))))

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
                  (join (transpose (map (lambda (br) (map (lambda (q) (join (map join (transpose (map (split #4) q))))) (transpose br)))
                    (join
                      (reduceSeq
                        (lambda (acc tiles)
                          (let la (split #4 (asVector #4 (toLocal (staged (join (get #0 tiles))))))
                            (let lb (split #32 (asVector #4 (toLocal (staged (join (transpose (get #1 tiles)))))))
                              (mapLcl1
                                (lambda (ia)
                                  (mapLcl0
                                    (lambda (jb)
                                      (join
                                        (reduceSeqUnroll
                                          (lambda (c kp)
                                            (let ap (toPrivate (mapSeqUnroll (lambda (x) x) (get #0 kp)))
                                              (join (reduceSeqUnroll
                                                (lambda (c2 kq)
                                                  (let bp (toPrivate (mapSeqUnroll (lambda (x) x) (get #1 kq)))
                                                    (mapSeqUnroll
                                                      (lambda (cr)
                                                        (mapSeqUnroll (lambda (p) (+ (get #0 p) (* (get #1 cr) (get #1 p))))
                                                                      (zip (get #0 cr) (asScalar bp))))
                                                      (zip c2 (get #0 kq)))))
                                                c
                                                (zip (transpose (split #4 (asScalar ap))) (get #1 kp))))))
                                          (get #0 jb)
                                          (zip (get #1 ia) (get #1 jb)))))
                                    ;; work-item j's columns of B: [4 kq][4 kk][2 g] float4
                                    (zip (get #0 ia)
                                         (map (split #4) (transpose (map (lambda (row) (transpose (split #16 row))) lb))))))
                                ;; work-item i's rows of A: [4 kq][8 r] float4
                                (zip acc (map transpose (transpose (split #16 la))))))))
                        (mapLcl1 (lambda (r) (mapLcl0 (lambda (blk) (mapSeqUnroll (lambda (row) (mapSeqUnroll (lambda (x) x) row)) blk)) r))
                                 (split #16 (split #8 (split #8 (generate #16384 (lambda (i) 0.0f))))))
                        (zip (transpose (map (split #16) rows)) (transpose (map (split #16) cols)))))))))
                (split #128 (transpose b))))))
        (split #128 a)))))
