;; `split #3` over N: whether N is a multiple of 3 is only known from the data (here N = 10).
;; data: split_runtime.json
;; error-at: run
;; error: not a multiple of 3
(lift (N) ((array-type float N))
  (lambda (xs) (join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (x) x) c))) (split #3 xs)))))
