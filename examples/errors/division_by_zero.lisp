;; An integer division by zero fails on the interpreter and on the device alike (the device
;; tests the divisor instead of dividing by zero, which is undefined).
;; data: division_by_zero.json
;; error-at: run
;; error: integer division by zero
(lift (N) ((array-type uint N) (array-type uint N))
  (lambda (as bs) (toGlobal (mapGlb (lambda (p) (/ (get #0 p) (get #1 p))) (zip as bs)))))
