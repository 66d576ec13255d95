;; A whole-array inclusive prefix sum of floats (`scan`, lowered to one `scanGlb` launch), on 40
;; elements on a grid of quarters, so every order of the additions gives the same sums.
;; data: scan_float.json
;; expect: [-4.0, -6.25, -6.75, -5.5, -2.5, -6.0, -7.75, -7.75, -6.0, -2.5, -5.5, -6.75, -6.25, -4.0, 0.0, -2.5, -3.25, -2.25, 0.5, -3.25, -5.25, -5.5, -4.0, -0.75, -4.0, -5.5, -5.25, -3.25, 0.5, -2.25, -3.25, -2.5, 0.0, -4.0, -6.25, -6.75, -5.5, -2.5, -6.0, -7.75]
(lift
  (N)
  ((array-type float N))
  (lambda (xs) (scan + 0.0f xs)))
