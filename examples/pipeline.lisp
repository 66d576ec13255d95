;; An `o` pipeline read bottom-up: reverse, split into pairs, sum each pair on its own
;; work-item, join. `(o f g h x)` is `(f (g (h x)))`.
;; data: pipeline.json
;; expect: [15.0, 11.0, 7.0, 3.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (o join
       (mapGlb (lambda (pair) (toGlobal (reduceSeq + 0.0f pair))))
       (split #2)
       reverse
       xs)))
