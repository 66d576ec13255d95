;; `asVector 4` of a reversed array: the four lanes of a vector are not adjacent in memory in
;; that order, so they are read one by one (a `vload4` would read the wrong words). This is what
;; the high-level `map f (reverse xs)` is vectorized into.
;; data: as_vector_reverse.json
;; expect: [32.0, 30.0, 28.0, 26.0, 24.0, 22.0, 20.0, 18.0, 16.0, 14.0, 12.0, 10.0, 8.0, 6.0, 4.0, 2.0]
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (asScalar (mapGlb (lambda (v) (* v 2.0f)) (asVector #4 (reverse xs)))))))
