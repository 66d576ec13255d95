;; The sequential prefix `scanSeq` is part of the language but not implemented yet.
;; error: `scanSeq` is not supported yet
(lift (N) ((array-type float N))
  (lambda (xs) (join (mapGlb (lambda (r) (toGlobal (scanSeq + 0.0f r))) (split #4 xs)))))
