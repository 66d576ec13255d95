;; `reduceSeqUnroll` and `mapSeqUnroll`: fully unrolled loops over a chunk of 4 (their trip
;; counts are known at compile time); the private one-element accumulator becomes a scalar.
;; Each chunk gives half its sum.
;; data: unroll.json
;; expect: [5.0, 1.0, 1.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapGlb
        (lambda (c)
          (toGlobal (mapSeqUnroll (lambda (s) (* s 0.5f))
                                  (toPrivate (reduceSeqUnroll + 0.0f c)))))
        (split #4 xs)))))
