;; `dot` and `length` on float16: lane arithmetic, as for float8.
;; data: dot_wide16.json
;; expect: [[16.0, 4.0], [64.0, 8.0]]
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (toGlobal
      (mapGlb (lambda (p) (tuple (dot (get #0 p) (get #1 p)) (length (get #1 p))))
              (zip (asVector #16 xs) (asVector #16 ys))))))
