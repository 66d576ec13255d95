;; Column sums of a row-major matrix (written independently of the CGO'17 suite, as a check
;; that gemv T's rules are not tied to its file): s[j] = sum_i a[i][j].
(lift
  (R C)
  ((array-type (array-type float C) R))
  (lambda (a)
    (map (lambda (col) (reduce + 0.0f col)) (transpose a))))
