;; Partial application: `((mapGlb f) xs)` is `(mapGlb f xs)`, and `(+ 1.0f)` is the function
;; that adds one.
;; data: partial.json
;; expect: [1.0, 2.5, -1.0, 4.25]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal ((mapGlb (+ 1.0f)) xs))))
