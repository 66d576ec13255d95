;; In each work-item, a `generate` reads the input `xs` with `at` beside the work-item's own
;; element `x` (an argument of its C function): x * (xs[0] + xs[1] + xs[2] + xs[3]) = 10 x.
;; data: generate_tuples.json
;; expect: [[10.0], [20.0], [30.0], [40.0], [50.0], [60.0], [70.0], [80.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f
      (generate #4 (lambda (i) (* x (at i xs)))))))
      xs))))
