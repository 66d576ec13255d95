;; A boolean result (`and`, `not`, comparisons): whether each element lies in (0, 1].
;; Booleans print as JSON true/false.
;; data: bool_result.json
;; expect: [false, false, true, true, false, true]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (and (> x 0.0f) (not (> x 1.0f)))) xs))))
