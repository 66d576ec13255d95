;; Register-blocked matrix multiplication, C = A B (A row-major M x K, B row-major K x N), as the
;; Lift compiler's tiled and register-blocked kernels are written (Lift's `tileMapMap`,
;; `finishTiling`, `apply2DRegisterBlocking` with reordering; CLBlast's SGEMM): work-group
;; (J, I) computes the 64 x 64 tile of C at rows 64 I and columns 64 J, and each of its 16 x 16
;; work-items a 4 x 4 block of that tile, kept in registers over the whole of K. Work-item
;; (i, j) owns the tile's rows i, 16 + i, 32 + i, 48 + i and columns j, 16 + j, ...: the 16
;; work-items of a row read 16 consecutive elements of B's tile (distinct local memory banks)
;; and write 16 consecutive elements of C. K is walked in steps of 16: the work-group copies
;; the 64 x 16 tile of A and the 16 x 64 tile of B into local memory (`staged`), then each
;; work-item does 16 rank-1 updates of its block from 4 values of A and 4 of B copied into
;; registers.
;; Needs 64 | M, 64 | N, 16 | K.

;; A tile of 1024 elements copied by the 16 x 16 work-items, 4 each: step t of work-item (a, b)
;; moves element 256 t + 16 a + b, so consecutive work-items read and write consecutive
;; addresses and each work-item's 4 loads are independent.
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
                  ;; blocks [16][16][4][4]: element [i][j][r][c] is the tile's (16 r + i, 16 c + j)
                  (join (transpose (map (lambda (br) (map (lambda (q) (join (transpose q))) (transpose br)))
                    (join
                      (reduceSeq
                        (lambda (acc tiles)
                          ;; la: [64][16], the step's tile of A; lb: [16][64], its tile of B
                          (let la (split #16 (toLocal (staged (join (get #0 tiles)))))
                            (let lb (split #64 (toLocal (staged (join (transpose (get #1 tiles))))))
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
                                    ;; work-item j's columns of B: [16 k][4 c]
                                    (zip (get #0 ia) (transpose (map (lambda (row) (transpose (split #16 row))) lb)))))
                                ;; work-item i's rows of A: [16 k][4 r]
                                (zip acc (map transpose (transpose (split #16 la))))))))
                        (mapLcl1 (lambda (r) (mapLcl0 (lambda (blk) (mapSeqUnroll (lambda (row) (mapSeqUnroll (lambda (x) x) row)) blk)) r))
                                 (split #16 (split #4 (split #4 (generate #4096 (lambda (i) 0.0f))))))
                        (zip (transpose (map (split #16) rows)) (transpose (map (split #16) cols)))))))))
                (split #64 (transpose b))))))
        (split #64 a)))))
