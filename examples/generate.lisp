;; `generate`: an array computed from its index, never stored; here 0, 0.5, 1, ... added to xs.
;; data: generate.json
;; expect: [10.0, 20.5, 31.0, 41.5, 52.0, 62.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb (lambda (p) (+ (get #0 p) (get #1 p)))
              (zip xs (generate N (lambda (i) (* (to-float i) 0.5f))))))))
