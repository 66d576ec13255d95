;; The minimum and the maximum of each clamped 3-point window, as a tuple of two one-element
;; arrays per window: each component is stored in a buffer of its own (struct of arrays).
;; data: hl_stencil.json
;; expect: [[[1.0], [2.0]], [[1.0], [3.0]], [[2.0], [4.0]], [[3.0], [5.0]], [[0.0], [5.0]], [[-2.0], [5.0]], [[-2.0], [6.0]], [[-2.0], [6.0]]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (map (lambda (w) (tuple (reduceSeq min 3.4e38f w) (reduceSeq max -3.4e38f w)))
         (slide #3 #1 (pad-clamp #1 #1 xs)))))
