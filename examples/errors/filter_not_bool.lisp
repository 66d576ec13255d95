;; A filter predicate must return bool.
;; error: the predicate of `filterSeq` must return bool, but it returns float
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (filterSeq (lambda (x) (* x 2.0f)) xs))))
