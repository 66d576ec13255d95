;; 2-D work-groups: the matrix is cut into 2x2 tiles with views only (rows in pairs, then
;; `transpose` and `split #2`, so each tile holds COLUMN pairs); `mapWrg1`/`mapWrg` pick the
;; tile, `mapLcl1`/`mapLcl` the element. The result stays tiled:
;; result[bi][bj][j][i] = 2 * m[2*bi + i][2*bj + j].
;; data: tile_2d.json
;; expect: [[[[0.0, 20.0], [2.0, 22.0]], [[4.0, 24.0], [6.0, 26.0]], [[8.0, 28.0], [10.0, 30.0]]], [[[40.0, 60.0], [42.0, 62.0]], [[44.0, 64.0], [46.0, 66.0]], [[48.0, 68.0], [50.0, 70.0]]]]
(lift
  (M N)
  ((array-type (array-type float N) M))
  (lambda (m)
    (mapWrg1
      (lambda (rows)
        (mapWrg
          (lambda (tile)
            (toGlobal (mapLcl1 (lambda (col) (mapLcl (lambda (x) (* x 2.0f)) col)) tile)))
          (split #2 (transpose rows))))
      (split #2 m))))
