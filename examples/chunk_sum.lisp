;; Per-chunk sums: one work-item folds each chunk of 4 with `reduceSeq`.
;; A reduction returns a one-element array, so the chunks' results are joined.
;; data: chunk_sum.json
;; expect: [10.0, 26.0, 42.0, 58.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join (mapGlb (lambda (c) (toGlobal (reduceSeq + 0.0f c)))
                  (split #4 xs)))))
