(lift (N) ((array-type int N)) (lambda (xs) (scan + 0 xs)))
