;; A loop of one work-item over a vector, its count given at run time (`--size K=5`): each
;; float4 v becomes v/2 + 1, K times (`iterate K` over a `float4` state in a private
;; variable). Expected values: scripts/loop_examples.py (numpy float32).
;; data: loop_vector.json
;; sizes: K=5
;; expect: [1.9375, 1.96875, 2.0, 2.03125, 1.8125, 2.25, 3.9375, 1.953125]
(lift
  (N K)
  ((array-type float N))
  (lambda (xs)
    (asScalar
      (toGlobal
        (mapGlb (lambda (v) (iterate K (lambda (u) (+ (* u 0.5f) 1.0f)) v)) (asVector #4 xs))))))
