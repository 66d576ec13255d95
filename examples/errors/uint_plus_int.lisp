;; Arithmetic operands have one type: a uint plus an int literal needs `1u`.
;; error: `+` of uint and int: the operands must have the same type
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (+ u 1)) us))))
