;; `pad` of an array of tuples with a tuple: each component is padded with its part of the
;; fill (7.5 = 0.5 + 7 at both borders).
;; data: pad_tuples.json
;; expect: [7.5, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 7.5, 7.5]
(lift
  (N)
  ((array-type float N) (array-type int N))
  (lambda (xs ys)
    (toGlobal (mapGlb (lambda (t) (+ (get #0 t) (to-float (get #1 t))))
      (pad #1 #2 (tuple 0.5f 7) (zip xs ys))))))
