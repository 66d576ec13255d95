;; Thesis program 4.2: keep the elements below 0.5, then double them.
;; The filter's result is an existential array {∃X. [float]X}; here it is unpacked and packed
;; explicitly, as printed in the thesis. The result prints only its first X elements.
;; data: thesis_4_2.json
;; expect: [0.5, 0.25, 0.75, 0.0]
(lift
 (N)
 ((array-type float N))
 (lambda (xs)
   (unpack ys (filterSeq (lambda (x) (< x 0.5f))
     xs)
     (pack (mapSeq (lambda (x) (* x 2.0f)) ys)))))
