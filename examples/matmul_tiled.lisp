;; Matrix-matrix product in work-group tiles: work-group (i, j) computes a 2x2 tile of C. It
;; first copies the 2 rows of A and the 2 columns of B that the tile needs into local memory
;; (B's columns are copied as rows of B, so the global reads are coalesced, and seen through
;; `transpose`), then each work-item computes one dot product from local memory. The local
;; arrays hold 2*K floats: K is known only at run time, so the host sizes them at launch.
;; `map join (transpose ...)` re-assembles the tiles into rows of C; it is a view, no copy.
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
                (split #2 (transpose b))))))
        (split #2 a)))))
