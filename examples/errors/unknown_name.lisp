;; A misspelled primitive: the message suggests the closest name.
;; error: did you mean `mapGlb`?
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGbl (lambda (x) (* x 2.0f)) xs))))
