;; The Euclidean norm of each row of a row-major matrix (rows of 1000: not a power of two),
;; written as a user would: a map over the rows of a reduction of squares.
(lift
  (R C)
  ((array-type (array-type float C) R))
  (lambda (a)
    (join (map (lambda (row) (map sqrt (reduce + 0.0f (map (lambda (x) (* x x)) row)))) a))))
