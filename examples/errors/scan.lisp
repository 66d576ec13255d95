;; `scan` combines elements of one type: an initial value of another type is a type error at
;; the initial value.
;; error: the initial value of `scan` has type int, but the elements are float
(lift (N) ((array-type float N))
  (lambda (xs) (scan + 0 xs)))
