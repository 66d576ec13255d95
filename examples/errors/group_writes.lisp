;; Inside `mapWrg` and outside `mapLcl`, every work-item of the group runs the code: a value
;; computed there would be written by all of them. Both places are reported.
;; error: this value is computed directly inside `mapWrg`
(lift (N) ((array-type float N))
  (lambda (xs)
    (join (mapWrg (lambda (c) (toGlobal (mapSeq (lambda (x) (* x 2.0f)) c)))
                  (split #4 (toGlobal (mapWrg (lambda (y) (+ y 1.0f)) xs)))))))
