;; High-level dot product: `reduce` of a `map` over a `zip`.
;; data: hl_dot.json
;; expect: [36.0]
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))
