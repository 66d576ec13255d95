;; Newton's square root with the number of steps given at run time (`--size K=4`): each
;; work-item runs x <- (x + a/x) / 2 from x = a, K times, in a loop (`iterate K`, not
;; unrolled). Four steps from x = a are not yet converged for the larger inputs, so the
;; result shows K. Expected values: scripts/loop_examples.py (numpy float32).
;; data: newton_sqrt.json
;; sizes: K=4
;; expect: [0.5, 1.0, 1.4142135, 3.0000916, 10.840435, 776.8678, 0.10840434, 62505.312]
(lift
  (N K)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (a) (iterate K (lambda (x) (* 0.5f (+ x (/ a x)))) a)) xs))))
