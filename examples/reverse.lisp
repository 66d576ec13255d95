;; `reverse`: an index permutation read as xs[N-1-i].
;; data: reverse.json
;; expect: [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (- x 1.0f)) (reverse xs)))))
