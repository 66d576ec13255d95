;; `zip` of three arrays gives triples; `fma` computes a * b + c.
;; data: zip3.json
;; expect: [2.5, 4.25, -2.0, 0.0, -5.0]
(lift
  (N)
  ((array-type float N) (array-type float N) (array-type float N))
  (lambda (as bs cs)
    (toGlobal
      (mapGlb (lambda (t) (fma (get #0 t) (get #1 t) (get #2 t)))
              (zip as bs cs)))))
