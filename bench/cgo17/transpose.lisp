;; Transpose: the reference memory-bound kernel, a matrix transpose copied into a new array
;; (`transpose` alone is a view; the maps make the copy).
;;   out[j][i] = m[i][j]
;; CGO'17 large size: 8192 x 8192 (--size M=8192 --size N=8192).
;; data: transpose.json
;; expect: [[-1.25, -1.5, -4.0, 2.75, 3.75], [1.0, -1.5, -2.75, 2.5, -2.0], [0.5, 3.75, 1.5, 2.5, 0.25], [3.25, 0.5, -1.0, 0.5, -0.25], [0.75, -2.5, -1.5, -3.0, 0.0], [3.25, 2.5, -3.5, -1.5, 0.25], [0.5, 2.5, -2.5, 0.0, 1.5]]
(lift
  (M N)
  ((array-type (array-type float N) M))
  (lambda (m)
    (map (lambda (row) (map (lambda (x) x) row)) (transpose m))))
