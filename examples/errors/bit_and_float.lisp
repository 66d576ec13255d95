;; Bit operations take integers; a float operand is an error at that operand.
;; error: `bit-and` needs an integer (int, uint, long or ulong), but this is float
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (bit-and x 255u)) xs))))
