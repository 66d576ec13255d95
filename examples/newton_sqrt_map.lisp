;; newton_sqrt.lisp as a high-level program: a `map` whose function runs `iterate K` (K given
;; at run time, `--size K=4`) from x = a, with the step count beside the value in a tuple
;; state; lowering keeps the loop in one work-item.
;; Expected values: scripts/loop_examples.py (numpy float32).
;; data: newton_sqrt.json
;; sizes: K=4
;; expect: [[0.5, 4], [1.0, 4], [1.4142135, 4], [3.0000916, 4], [10.840435, 4], [776.8678, 4], [0.10840434, 4], [62505.312, 4]]
(lift
  (N K)
  ((array-type float N))
  (lambda (xs)
    (map
      (lambda (a)
        (iterate K
          (lambda (s) (tuple (* 0.5f (+ (get #0 s) (/ a (get #0 s)))) (+ (get #1 s) 1)))
          (tuple a 0)))
      xs)))
