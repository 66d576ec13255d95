;; `split` of a zip whose components differ in depth (a vector and the rows of a matrix): taking
;; a component commutes with the split, so each component is read with its own number of
;; indices (gemv's and md's work-group variants have this shape).
;; data: split_zip_rows.json
;; expect: [4.0, 6.0, 9.0, 11.0]
(lift (N M) ((array-type float N) (array-type (array-type float M) N))
  (lambda (xs yss)
    (join (join (toGlobal (mapWrg (lambda (chunk) (mapLcl (lambda (p)
      (reduceSeq (lambda (a b) (+ a b)) (get #0 p) (get #1 p))) chunk)) (split #2 (zip xs yss))))))))
