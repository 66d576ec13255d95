;; `filterSeq` per element of a `mapGlb` nested in `mapGlb2`: the result holds filter results two
;; array levels deep (pairs of rows, each row keeping its positive elements), returned with a
;; length per row of each pair.
;; data: filter_two_levels.json
;; expect: [[[1.0, 3.0], []], [[7.0, 9.0], [0.5]]]
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (mapGlb2 (lambda (rows) (mapGlb (lambda (r) (filterSeq (lambda (x) (> x 0.0f)) r)) rows)) (split #2 xs))))
