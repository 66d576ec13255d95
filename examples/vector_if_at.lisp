;; `if` between two float4 values (a scalar condition: a C ternary), one of them read by `at`
;; at a computed index from an array of vectors.
;; data: vector_if_at.json
;; expect: [[2.0, 4.0, 6.0, 8.0], [5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0], [-2.0, -4.0, -6.0, -8.0]]
(lift
  (N)
  ((array-type (vector-type float 4) N) (array-type int N))
  (lambda (vs ks)
    (toGlobal (mapGlb (lambda (p) (if (> (get #1 p) 0) (* (get #0 p) 2.0f) (at (+ (get #1 p) 1) vs)))
                      (zip vs ks)))))
