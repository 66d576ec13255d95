;; atax: y = A^T (A x) (A row-major M x N, x of length N, y of length N)
;; size: M=8192 N=8192
;; form: tmp = A x bound with let (map row dot, join), then y = map over the columns of (transpose A) dotted with tmp
;; data: data/atax.json
;; expect: [7.16796875,13.2617188,23.2988281,0.552734375,15.8222656,-18.1621094,-18.0859375,10.3066406]
(lift (M N) ((array-type (array-type float N) M) (array-type float N))
  (lambda (A x)
    (let tmp (join (map (lambda (row) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row x)))) A))
      (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip col tmp)))) (transpose A))))))
