;; `filterSeq` without explicit unpack/pack: the `let` unpacks the filter result and the
;; compiler packs the body back (thesis §4.2.1). Squares the positive elements.
;; data: filter_seq.json
;; expect: [2.25, 9.0, 0.0625, 4.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let ys (filterSeq (lambda (x) (> x 0.0f)) xs)
      (toGlobal (mapSeq (lambda (y) (* y y)) ys)))))
