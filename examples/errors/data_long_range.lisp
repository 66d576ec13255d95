;; 2^63 is beyond a long (it fits a ulong).
;; data: data_long_range.json
;; error-at: run
;; error: ls[0]: 9223372036854775808 is out of range for a long (64-bit: -9223372036854775808 to 9223372036854775807)
(lift (N) ((array-type long N))
  (lambda (ls) (toGlobal (mapGlb (lambda (l) (+ l 1l)) ls))))
