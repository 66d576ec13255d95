;; atax: y = A^T (A x) (A row-major M x N, x of length N, y of length N)
;; size: M=8192 N=8192
;; form: as in the PolyBench loop: for each row, t = row . x, then y accumulates t * row; the accumulation is a reduce over scaled rows with an element-wise vector add
;; data: data/atax.json
;; expect: [7.16796875,13.2617188,23.2988281,0.552734375,15.8222656,-18.1621094,-18.0859375,10.3066406]
(define (vadd u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))
(lift (M N) ((array-type (array-type float N) M) (array-type float N))
  (lambda (A x)
    (at 0 (reduce vadd (map (lambda (v) 0.0f) x)
            (map (lambda (row)
                   (let t (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row x))))
                     (map (lambda (a) (* t a)) row)))
                 A)))))
