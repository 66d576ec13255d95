;; A host loop whose state is a filter result: its length would change every step and live on
;; the device; not supported yet.
;; error: not supported yet
(lift (N) ((array-type float N))
  (lambda (xs)
    (iterate-until #10 (lambda (p q) true)
      (lambda (s) (filterGlb (lambda (x) (> x 1.0f)) s))
      xs)))
