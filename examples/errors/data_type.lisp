;; The parameter is an array of ints, but the data holds floats.
;; data: data_type.json
;; error-at: run
;; error: int
(lift (N) ((array-type int N))
  (lambda (ks) (toGlobal (mapGlb (lambda (k) (* k 2)) ks))))
