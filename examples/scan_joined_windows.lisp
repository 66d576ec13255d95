;; A device-wide scan of a view that is not the buffer in order: the joined windows of
;; `slide #2 #1` repeat every inner element, so four consecutive elements of the view are not
;; four consecutive ints of `xs` and must not be loaded as one vector.
;; Expected by hand: running sums of 3 -1 -1 4 4 1 1 -5 -5 9 9 2 2 -6 -6 5 5 3.
;; data: scan_joined_windows.json
;; expect: [3, 2, 1, 5, 9, 10, 11, 6, 1, 10, 19, 21, 23, 17, 11, 16, 21, 24]
(lift
  (N)
  ((array-type int N))
  (lambda (xs) (toGlobal (scanGlb + 0 (join (slide #2 #1 xs))))))
