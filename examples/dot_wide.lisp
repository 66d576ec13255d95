;; `dot` and `length` on float8 (OpenCL has them only up to 4 lanes): lane arithmetic.
;; data: dot_wide.json
;; expect: [[7.0, 5.0], [28.0, 10.0]]
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (toGlobal
      (mapGlb (lambda (p) (tuple (dot (get #0 p) (get #1 p)) (length (get #1 p))))
              (zip (asVector #8 xs) (asVector #8 ys))))))
