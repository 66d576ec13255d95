;; `pad #1 #2 v`: one constant element before and two after (a view: no copy of xs).
;; data: pad.json
;; expect: [-1.0, 1.0, 2.0, 3.0, 4.0, 5.0, -1.0, -1.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) x) (pad #1 #2 -1.0f xs)))))
