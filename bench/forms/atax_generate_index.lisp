;; atax: y = A^T (A x) (A row-major M x N, x of length N, y of length N)
;; size: M=8192 N=8192
;; form: explicit indices: tmp_i from generate M / generate N with at, then y_j from generate N / generate M reading (at j (at i A)) and (at i tmp)
;; data: data/atax.json
;; expect: [7.16796875,13.2617188,23.2988281,0.552734375,15.8222656,-18.1621094,-18.0859375,10.3066406]
(lift (M N) ((array-type (array-type float N) M) (array-type float N))
  (lambda (A x)
    (let tmp (map (lambda (i) (at 0 (reduce + 0.0f (map (lambda (j) (* (at j (at i A)) (at j x))) (generate N (lambda (j) j))))))
                  (generate M (lambda (i) i)))
      (map (lambda (j) (at 0 (reduce + 0.0f (map (lambda (i) (* (at j (at i A)) (at i tmp))) (generate M (lambda (i) i))))))
           (generate N (lambda (j) j))))))
