(lift (N M) ((array-type (array-type float M) N)) (lambda (xss) (map (lambda (r) (scan + 0.0f r)) xss)))
