;; Scale a vector by a scalar parameter: a scalar argument reaches every work-item.
;; data: vector_scale.json
;; expect: [1.5, -3.0, 0.75, 4.5, 0.0, 15.0, -0.375, 11.25]
(lift
  (N)
  ((array-type float N) float)
  (lambda (xs alpha)
    (toGlobal (mapGlb (lambda (x) (* alpha x)) xs))))
