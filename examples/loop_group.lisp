;; A loop with a run-time count (`--size K=3`) at work-group level: each work-group keeps its
;; chunk of 64 in local memory and, K times, its `mapLcl` writes the chunk reversed and halved
;; into a second local buffer, copied back after a barrier; every work-item runs the same K
;; steps, so every barrier is reached by all of them.
;; Expected values: scripts/loop_examples.py (numpy float32).
;; data: loop_group.json
;; sizes: K=3
;; expect: [-0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125, -0.25, 1.5, 1.125, 0.75, 0.375, 0.0, -0.375, 1.375, 1.0, 0.625, 0.25, -0.125, -0.5, 1.25, 0.875, 0.5, 0.125]
(lift (N K) ((array-type float N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal
            (mapLcl (lambda (x) x)
              (iterate K
                (lambda (s) (toLocal (mapLcl (lambda (x) (* x 0.5f)) (reverse s))))
                (toLocal (mapLcl (lambda (x) x) chunk))))))
        (split #64 xs)))))
