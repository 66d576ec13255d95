;; A loop of one work-item over a private array: each work-item copies its chunk of 4 into
;; private memory and halves it until every element is below 1 (`iterate-until` whose
;; condition is a `[bool]1` folded from the new state), at most 50 steps; chunks stop after
;; different numbers of steps. Expected values: scripts/loop_examples.py (numpy float32).
;; data: loop_private_array.json
;; expect: [0.25, 0.125, 0.375, 0.05, 0.75, 0.25, 0.125, 0.625, 0.78125, -0.0546875, 0.09375, 0.5, 0.75, 0.495, 0.505, 0.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapGlb
        (lambda (chunk)
          (toGlobal
            (mapSeq (lambda (x) x)
              (iterate-until #50
                (lambda (prev next) (reduceSeq (lambda (ok v) (and ok (< v 1.0f))) true next))
                (lambda (s) (toPrivate (mapSeq (lambda (v) (* v 0.5f)) s)))
                (toPrivate (mapSeq (lambda (x) x) chunk))))))
        (split #4 xs)))))
