;; An `iterate` body is emitted once per step with that step's lengths: halving chunks of 4096
;; keeps 2048 values in private memory at the first step, more than the 1024 allowed there,
;; although the result (512) fits; validation counts the largest step.
;; error: this private array holds 2048 values
(lift (N) ((array-type float N))
  (lambda (xs)
    (join (toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x) (iterate #3 (lambda (a) (toPrivate (mapSeq (lambda (p) (+ (at 0 p) (at 1 p))) (split #2 a)))) c)))
                            (split #4096 xs))))))
