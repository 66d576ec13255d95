;; The device-wide prefix `scanGlb` is part of the language but not implemented yet.
;; error: `scanGlb` is not supported yet
(lift (N) ((array-type int N))
  (lambda (xs) (scanGlb + 0 xs)))
