;; `at` in the branch of `if` not taken: OpenCL evaluates both branches and selects, so the
;; bounds check of `(at i xs)` reports only where `(< i 3)` holds (index 5 is never read).
;; data: at_in_if.json
;; expect: [1.0, 0.0, 3.0]
(lift
  (N M)
  ((array-type float N) (array-type int M))
  (lambda (xs is)
    (toGlobal (mapGlb (lambda (i) (if (< i 3) (at i xs) 0.0f)) is))))
