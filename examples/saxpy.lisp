;; SAXPY, alpha * x + y: `zip` of two vectors with a scalar parameter; the pair is taken
;; apart with `get`.
;; data: saxpy.json
;; expect: [2.5, 4.5, 6.5, 8.5, -1.0, -2.0, 4.0, 4.5]
(lift
  (N)
  (float (array-type float N) (array-type float N))
  (lambda (alpha xs ys)
    (toGlobal
      (mapGlb (lambda (p) (+ (* alpha (get #0 p)) (get #1 p)))
              (zip xs ys)))))
