;; Register-blocked matrix multiplication, C = A B (A row-major M x K, B row-major K x N), as the
;; Lift compiler's tiled and register-blocked kernels are written (Lift's `tileMapMap`,
;; `finishTiling`, `apply2DRegisterBlocking`; CLBlast's SGEMM): work-group (J, I) computes the
;; 64 x 64 tile of C at rows 64 I and columns 64 J, and each of its 16 x 16 work-items a 4 x 4
;; block of that tile, kept in private memory over the whole of K. K is walked in steps of 16:
;; the work-group copies the 64 x 16 tile of A (stored transposed, so a step's column of A is a
;; row of local memory) and the 16 x 64 tile of B into local memory, consecutive work-items
;; reading consecutive addresses, then each work-item does 16 rank-1 updates of its block from
;; 4 values of A and 4 of B held in registers. Needs 64 | M, 64 | N, 16 | K.
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
                  ;; the accumulated blocks [16][16][4][4] as the 64 x 64 tile
                  (join (map (lambda (br) (map join (transpose br)))
                    (join
                      (reduceSeq
                        (lambda (acc tiles)
                          ;; la: [16][64], column k of the tile of A; lb: [16][64], row k of B's
                          (let la (toLocal (transpose (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (get #0 tiles))))
                            (let lb (toLocal (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (transpose (get #1 tiles))))
                              (mapLcl1
                                (lambda (ia)
                                  (mapLcl0
                                    (lambda (jb)
                                      (join
                                        (reduceSeqUnroll
                                          (lambda (c kp)
                                            (let ap (toPrivate (mapSeqUnroll (lambda (x) x) (get #0 kp)))
                                              (let bp (toPrivate (mapSeqUnroll (lambda (x) x) (get #1 kp)))
                                                (mapSeqUnroll
                                                  (lambda (cr)
                                                    (mapSeqUnroll (lambda (p) (+ (get #0 p) (* (get #1 cr) (get #1 p))))
                                                                  (zip (get #0 cr) bp)))
                                                  (zip c ap)))))
                                          (get #0 jb)
                                          (zip (get #1 ia) (get #1 jb)))))
                                    (zip (get #0 ia) (transpose (map (split #4) lb)))))
                                (zip acc (transpose (map (split #4) la)))))))
                        (mapLcl1 (lambda (r) (mapLcl0 (lambda (blk) (mapSeqUnroll (lambda (row) (mapSeqUnroll (lambda (x) x) row)) blk)) r))
                                 (split #16 (split #4 (split #4 (generate #4096 (lambda (i) 0.0f))))))
                        (zip (transpose (map (split #16) rows)) (transpose (map (split #16) cols))))))))
                (split #64 (transpose b))))))
        (split #64 a)))))
