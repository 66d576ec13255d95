;; A 3-point stencil with clamped boundaries: `pad-clamp #1 #1` repeats the first and last
;; elements, `slide #3 #1` gives the N windows of 3; each work-item sums one window.
;; data: stencil3.json
;; expect: [4.0, 7.0, 14.0, 28.0, 56.0, 112.0, 224.0, 320.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapGlb (lambda (w) (toGlobal (reduceSeq + 0.0f w)))
              (slide #3 #1 (pad-clamp #1 #1 xs))))))
