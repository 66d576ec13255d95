;; Per row of a matrix: the row doubled (a symbolic length M), its sum and a constant, as one
;; tuple; a row in a tuple has no C struct layout, so each component gets a buffer of its own.
;; data: zip_2d_result.json
;; expect: [[[2.0, 4.0], [3.0], 7], [[6.0, 8.0], [7.0], 7], [[10.0, 12.0], [11.0], 7]]
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (map (lambda (r) (tuple (map (lambda (x) (* x 2.0f)) r) (reduceSeq + 0.0f r) 7)) xs)))
