;; A filter result bound before a host loop and read inside it would have to carry its length
;; across the section; not supported yet.
;; error: used across a host section is not supported yet
(lift (N K) ((array-type float N))
  (lambda (xs)
    (let big (filterGlb (lambda (x) (> x 1.0f)) xs)
      (iterate K (lambda (s) (mapGlb (lambda (x) (+ x (at 0 (reduceSeq (lambda (a y) (+ a y)) 0.0f big)))) s)) xs))))
