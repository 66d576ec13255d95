;; `split #4` of a filter result whose kept count (9) is not a multiple of 4: only the device
;; knows the count, so the kernel reading it checks and the run fails with both places named.
;; data: filter_split_count.json
;; error-at: run
;; error: not a multiple of 4
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.0f)) xs))
      (toGlobal (mapGlb (lambda (c) (reduceSeq + 0.0f c)) (split #4 ys))))))
