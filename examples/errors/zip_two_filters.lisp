;; Two filter results have unrelated run-time lengths, so they cannot be zipped (thesis ch. 3).
;; error: `zip` of arrays of different lengths
(lift (N) ((array-type float N))
  (lambda (xs) (let a (filterSeq (lambda (x) (> x 0.0f)) xs) (let b (filterSeq (lambda (x) (< x 0.0f)) xs)
    (toGlobal (mapSeq (lambda (p) (get #0 p)) (zip a b)))))))
