;; MM: CLBlast's matrix multiplication, C = A B, A row-major M x K, B row-major K x N.
;;   c[i][j] = sum_k a[i][k] b[k][j]   (a column of B is a row of B^T)
;; CGO'17 large size: 4096^3 (--size M=4096 --size K=4096 --size N=4096).
;; data: mm.json
;; expect: [[0.625, -3.25, 4.3125, 1.4375, 1.75], [-0.125, -3.375, 2.5625, 3.5625, 2.375], [1.375, 5.75, 1.1875, -2.0625, 4.875], [3.125, -1.375, -1.3125, -0.3125, 0.5625]]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (map (lambda (row) (join (map (lambda (col) (dot-product row col)) (transpose b))))
         a)))
