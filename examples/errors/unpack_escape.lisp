;; The length of an unpacked filter result may not escape the `unpack` (a pair of arrays cannot be packed).
;; error: escapes its `unpack`
(lift (N) ((array-type float N))
  (lambda (xs) (unpack ys (filterSeq (lambda (x) (> x 0.0f)) xs) (tuple ys ys))))
