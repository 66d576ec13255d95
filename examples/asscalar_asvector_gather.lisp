;; Gathering from `asScalar (asVector #4 xs)` at indices read from an array: the lane is unknown
;; at compile time, and the view reads `xs` at that index directly.
;; data: asscalar_asvector_gather.json
;; expect: [8.0, 1.0, 6.0, 6.0, 3.0]
(lift (N M) ((array-type float N) (array-type int M))
  (lambda (xs is)
    (toGlobal (mapGlb (lambda (i) (at i (asScalar (asVector #4 xs)))) is))))
