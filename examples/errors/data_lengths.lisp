;; Both parameters have length N, but the data gives 4 elements for xs and 5 for ys.
;; data: data_lengths.json
;; error-at: run
;; error: N is 4 from xs but 5 from ys
(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ys) (toGlobal (mapGlb (lambda (p) (+ (get #0 p) (get #1 p))) (zip xs ys)))))
