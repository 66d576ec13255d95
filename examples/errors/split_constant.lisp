;; `split #3` of an array whose length is the constant 10: known to fail at compile time.
;; error: 10 is not a multiple of 3
(lift () ((array-type float 10))
  (lambda (xs) (join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (x) x) c))) (split #3 xs)))))
