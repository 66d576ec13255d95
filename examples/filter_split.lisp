;; `filterGlb` then `split #4` of its result: the kept count must be a multiple of 4, which only
;; the device knows (here 8 elements are kept). Each chunk of 4 is summed.
;; data: filter_split.json
;; expect: [[10.0], [26.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.0f)) xs))
      (toGlobal (mapGlb (lambda (c) (reduceSeq + 0.0f c)) (split #4 ys))))))
