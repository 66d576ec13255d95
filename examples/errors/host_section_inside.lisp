;; A host section's value is used by a kernel through `let`, not as a nested argument.
;; error: is used inside this expression (not supported yet)
(lift (N K) ((array-type float N))
  (lambda (xs)
    (mapGlb (lambda (x) (* x 2.0f))
      (iterate K (lambda (s) (mapGlb (lambda (x) (+ x 1.0f)) s)) xs))))
