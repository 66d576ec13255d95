;; `-` of a negative literal: printed with parentheses, never as the decrement `--2.0f`.
;; data: neg_literal.json
;; expect: [3.0, 4.0, -1.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (+ x (- -2.0f))) xs))))
