;; The parameter is an array of ints, but the data holds floats.
;; data: data_type.json
;; error-at: run
;; error: ks[1]: expected an int, found the fractional number 2.5
(lift (N) ((array-type int N))
  (lambda (ks) (toGlobal (mapGlb (lambda (k) (* k 2)) ks))))
