;; A result of tuples holding a tuple: the inner struct's typedef comes before the outer one.
;; data: nested_tuple.json
;; expect: [[[1, 0.5], 2], [[3, -1.0], 4]]
(lift
  (N)
  ((array-type float N) (array-type int N))
  (lambda (xs ks)
    (toGlobal
      (mapGlb (lambda (p) (tuple (tuple (get #1 p) (get #0 p)) (+ (get #1 p) 1)))
              (zip xs ks)))))
