;; High-level primitives `map`, `filter`, `reduce`: the sum of the squares of the positive
;; elements. No decision about threads or memory is made here, so only the interpreter runs it
;; until the rewriter (issue 4) lowers such programs to OpenCL.
;; snapshot-cl: no
;; opencl: no
;; data: high_level.json
;; expect: [14.25]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f (map (lambda (x) (* x x)) (filter (lambda (x) (> x 0.0f)) xs)))))
