;; A defined function applied to more arguments than its definition takes.
;; error: this function takes 1, but is given 2
(define (double x) (* x 2.0f))
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (double x x)) xs))))
