;; An escape-time loop in one work-item (`iterate-until` inside a kernel) is not implemented yet.
;; error: `iterate-until` inside a kernel is not supported yet
(lift (N) ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (iterate-until #100 (lambda (p n) (< n 1.0f)) (lambda (y) (/ y 2.0f)) x)) xs))))
