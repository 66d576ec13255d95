;; A whole-array reduction of a zip of three arrays: sum_i a_i * b_i + c_i.
(lift
  (N)
  ((array-type float N) (array-type float N) (array-type float N))
  (lambda (a b c)
    (reduce + 0.0f (map (lambda (t) (+ (* (get #0 t) (get #1 t)) (get #2 t))) (zip a b c)))))
