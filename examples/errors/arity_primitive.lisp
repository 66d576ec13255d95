;; A function of one parameter where `reduceSeq` passes two (accumulator and element).
;; error: this function takes 1 argument(s), but is called with 2
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (reduceSeq (lambda (acc) acc) 0.0f xs))))
