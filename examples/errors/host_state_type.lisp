;; A host loop keeps its state in two device buffers: every step must return the state's type.
;; error: must keep the state's type
(lift (N) ((array-type float N))
  (lambda (xs)
    (iterate-until #10 (lambda (p q) true)
      (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) (join (slide #2 #1 s))))
      xs)))
