;; `pad` with a tuple inside a map over rows: every row of tuples is padded on both sides
;; (2.0 = -1.0 + 3 at the borders of each row).
;; data: pad_tuples.json
;; expect: [[2.0, 2.0, 4.0, 6.0, 8.0, 2.0], [2.0, 10.0, 12.0, 14.0, 16.0, 2.0]]
(lift
  (N)
  ((array-type float N) (array-type int N))
  (lambda (xs ys)
    (toGlobal (mapGlb (lambda (r) (mapSeq (lambda (t) (+ (get #0 t) (to-float (get #1 t)))) r))
      (map (lambda (r) (pad #1 #1 (tuple -1.0f 3) r)) (split #4 (zip xs ys)))))))
