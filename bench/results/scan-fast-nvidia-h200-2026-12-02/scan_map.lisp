(lift (N) ((array-type int N)) (lambda (xs) (map (lambda (x) (* 2 x)) (scan + 0 (map (lambda (x) (+ x 1)) xs)))))
