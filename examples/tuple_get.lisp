;; Tuples of mixed types: the result is an array of (int, float) pairs, printed as JSON pairs.
;; `get #i` takes a tuple apart; `tuple` builds one.
;; data: tuple_get.json
;; expect: [[1, 1.0], [2, 2.0], [0, -3.0], [42, 4.5]]
(lift
  (N)
  ((array-type float N) (array-type int N))
  (lambda (xs ks)
    (toGlobal
      (mapGlb (lambda (p) (tuple (+ (get #1 p) 1) (* (get #0 p) 2.0f)))
              (zip xs ks)))))
