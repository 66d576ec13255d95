;; A `split` of a `split`'s rows zipped with a `generate` of the user's `(/ M 30)`: the checks
;; `10 | M` and `3 | M/10` show `30 | M`, so the user's floor division and the splits' exact
;; ones are the same length.
;; data: split_split_generate.json
;; expect: [30.0, 31.0]
(lift
  (M)
  ((array-type float M))
  (lambda (xs)
    (join
      (toGlobal
        (mapGlb (lambda (p)
                  (mapSeq (lambda (s) (+ s (get #1 p)))
                          (reduceSeq (lambda (a x) (+ a x)) 0.0f (join (get #0 p)))))
                (zip (split #3 (split #10 xs)) (generate (/ M 30) (lambda (i) (to-float i)))))))))
