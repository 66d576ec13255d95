;; Thesis program 2.1: double every element of a vector.
;; One work-item per element (`mapGlb`); `toGlobal` stores the mapped array in global memory.
;; Written exactly as in the thesis (the closing parentheses joined on one line).
;; data: thesis_2_1.json
;; expect: [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))
