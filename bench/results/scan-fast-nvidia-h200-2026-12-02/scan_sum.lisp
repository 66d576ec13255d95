(lift (N) ((array-type float N)) (lambda (xs) (scan + 0.0f xs)))
