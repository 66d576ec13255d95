;; Matrix-matrix product tiled over K as well (the classic local-memory tiling): work-group
;; (i, j) owns a 2x2 block of C. A sequential `reduceSeq` over the K/3 pairs of tiles (3
;; columns of the block's rows of A, 3 rows of the block's columns of B) stages each pair in
;; local memory and adds its contribution to the block's accumulator, an array in local
;; memory: each work-item updates its own element. The accumulator starts from zeros built
;; with `generate`, and the final block goes to C through `map join (transpose ...)`.
;; data: matmul_tiled.json
;; expect: [[-22.0, -16.0, 17.0, -17.0], [-9.0, -12.0, -5.0, 9.0], [24.0, -9.0, -9.0, -5.0], [-15.0, 21.0, -4.0, -5.0]]
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
                      (mapLcl1 (lambda (r) (mapLcl0 (lambda (x) x) r)) (split #2 (generate #4 (lambda (i) 0.0f))))
                      (zip (transpose (map (split #3) rows)) (transpose (map (split #3) cols))))))
                (split #2 (transpose b))))))
        (split #2 a)))))
