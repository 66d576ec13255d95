;; A program with a host section (a host-level `iterate` of a kernel) whose value is a tuple
;; holding an array: between the host's steps a value lives in one device buffer, and a tuple
;; of arrays is stored as one buffer per component.
;; error: a tuple holding arrays as the value of a program with host sections
(lift
  (N)
  ((array-type int N))
  (lambda (xs) (tuple 0.0f (iterate #1 (lambda (s) (map (lambda (x) x) s)) xs))))
