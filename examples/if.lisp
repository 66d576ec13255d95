;; `if` selects between two scalars: a leaky ReLU.
;; data: if.json
;; expect: [-1.0, -0.25, 0.0, 0.5, 2.0, -0.125]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (if (> x 0.0f) x (* x 0.25f))) xs))))
