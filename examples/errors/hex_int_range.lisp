;; A hexadecimal literal without suffix is an int: 0xffffffff does not fit.
;; error: bad number `0xffffffff`: the value does not fit in int; write `u`, `l` or `ul` after it
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (bit-and u 0xffffffff)) us))))
