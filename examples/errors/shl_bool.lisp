;; A bool has no bits to shift.
;; error: `shl` needs an integer (int, uint, long or ulong), but this is bool
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (shl (> u 3u) 1)) us))))
