;; atax: y = A^T (A x) (A row-major M x N, x of length N, y of length N)
;; size: M=8192 N=8192
;; form: a defined matvec helper (dot with at 0, zip vector first) applied twice: (matvec (transpose A) (matvec A x)), as a pipeline
;; data: data/atax.json
;; expect: [7.16796875,13.2617188,23.2988281,0.552734375,15.8222656,-18.1621094,-18.0859375,10.3066406]
(define (dotp u v) (at 0 (reduce + 0.0f (map (lambda (p) (* (get #1 p) (get #0 p))) (zip u v)))))
(define (matvec m v) (map (lambda (row) (dotp v row)) m))
(lift (M N) ((array-type (array-type float N) M) (array-type float N))
  (lambda (A x)
    (matvec (transpose A) (matvec A x))))
