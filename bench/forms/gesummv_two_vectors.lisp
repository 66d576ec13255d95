;; gesummv: y = alpha A x + beta B x (A, B row-major M x N)
;; size: M=8192 N=8192
;; form: a defined matvec used twice (A x and B x as whole vectors bound with let), then zip bx ax (swapped) with the combination commuted: beta*b + alpha*a
;; data: data/gesummv.json
;; expect: [-2.875,4.671875,-2.734375,-2.6015625,2.171875,6.25]
(define (matvec m v) (join (map (lambda (row) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row v)))) m)))
(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N) float float)
  (lambda (A B x alpha beta)
    (let ax (matvec A x)
      (let bx (matvec B x)
        (map (lambda (ba) (+ (* beta (get #0 ba)) (* alpha (get #1 ba)))) (zip bx ax))))))
