;; An unsigned literal cannot be negative.
;; error: bad number `-1u`: a uint cannot be negative
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (+ u -1u)) us))))
