;; The largest element of each row (a reduction per output, rows contiguous).
(lift
  (R C)
  ((array-type (array-type float C) R))
  (lambda (a)
    (map (lambda (row) (reduce max -1.0e30f row)) a)))
