;; A `generate` whose function runs a loop over a scalar: from its index i, s -> 2s + 1 until s
;; exceeds 5, plus K steps of s -> s + 1 (K a size); the loops' statements go into the C
;; function of the index, called where each element is read.
;; data: generate_loop.json
;; sizes: K=2
;; expect: [9.5, 8.0, 11.0, 9.0, 12.0, 10.0, 13.0, 15.0]
(lift
  (N K)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (p) (+ (get #0 p) (get #1 p)))
      (zip xs (generate N (lambda (i)
        (to-float (iterate K (lambda (t) (+ t 1))
          (iterate-until #8 (lambda (prev next) (> next 5)) (lambda (s) (+ s (+ s 1))) i))))))))))
