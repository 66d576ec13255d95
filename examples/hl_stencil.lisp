;; High-level 3-point stencil with clamped boundaries: the sum of each window, halved.
;; data: hl_stencil.json
;; expect: [2.0, 3.0, 4.5, 6.0, 4.5, 1.5, 2.0, 5.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (map (lambda (s) (* s 0.5f))
         (join (map (lambda (w) (reduce + 0.0f w)) (slide #3 #1 (pad-clamp #1 #1 xs)))))))
