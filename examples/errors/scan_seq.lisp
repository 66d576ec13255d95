;; `scanSeq` folds into an accumulator whose type its function must keep.
;; error: the function of `scanSeq` returns bool, but the accumulator has type float
(lift (N) ((array-type float N))
  (lambda (xs) (join (mapGlb (lambda (r) (toGlobal (scanSeq (lambda (a x) (< a x)) 0.0f r))) (split #4 xs)))))
