;; A reduction whose accumulator is an array: each work-item adds up the rows of its chunk of
;; two rows element by element. The accumulator lives in private memory (its size is known)
;; and starts from zeros made by `generate`.
;; data: array_acc.json
;; expect: [[6.0, 8.0, 10.0, 12.0], [-1.0, 0.5, 2.0, 0.0]]
(lift
  (N)
  ((array-type (array-type float 4) N))
  (lambda (xs)
    (join
      (mapGlb
        (lambda (chunk)
          (reduceSeq
            (lambda (acc row) (mapSeq (lambda (p) (+ (get #0 p) (get #1 p))) (zip acc row)))
            (generate #4 (lambda (i) 0.0f))
            chunk))
        (split #2 xs)))))
