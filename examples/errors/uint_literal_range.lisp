;; 2^32 does not fit in a uint.
;; error: bad number `4294967296u`: the value does not fit in uint
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (+ u 4294967296u)) us))))
