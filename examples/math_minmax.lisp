;; `min`, `max`, `abs` and unary minus through `-`: each element gives
;; (clamp to [-1, 1], |x|, -x) as a tuple.
;; data: math_minmax.json
;; expect: [[-1.0, 3.0, 3.0], [-0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [0.75, 0.75, -0.75], [1.0, 2.5, -2.5]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb (lambda (x) (tuple (max (min x 1.0f) -1.0f) (abs x) (- 0.0f x)))
              xs))))
