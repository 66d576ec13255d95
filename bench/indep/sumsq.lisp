;; The sum of squares of a vector: a whole-array reduction of a map.
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f (map (lambda (x) (* x x)) xs))))
