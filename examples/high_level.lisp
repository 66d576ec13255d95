;; High-level primitives `map`, `filter`, `reduce`: the sum of the squares of the positive
;; elements. No decision about threads or memory is written here; the compiler's default lowering
;; picks one (the rewriter of issue 4 will choose better ones). The filter result goes straight
;; into `map`, and the map of it straight into `reduce`: pack/unpack are inserted automatically.
;; data: high_level.json
;; expect: [14.25]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f (map (lambda (x) (* x x)) (filter (lambda (x) (> x 0.0f)) xs)))))
