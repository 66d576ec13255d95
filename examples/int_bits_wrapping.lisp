;; The bits of a float or a double read as a signed integer (`as-int`, `as-long`) as an operand of
;; wrapping arithmetic: the kernel computes `-` in the unsigned type of the width and must take
;; the reinterpreted bits there, not the float (difffuzz seed 2630, case 189, had the double's
;; value subtracted instead of its bits). Expected values: Python's `struct`.
;; data: int_bits_wrapping.json
;; expect: [-4598175220593852416, 4613937819319009279, -4613937819319009277, -4756540478219427577, 9223372034707292160, -4620411743795412985]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (mapGlb (lambda (x)
      (+ (- (to-long x) (as-long (to-double x))) (to-long (- 0 (as-int x)))))
      xs)))
