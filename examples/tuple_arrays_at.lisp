;; `at` on an array of tuples holding arrays: the picked tuple is the component buffers read at
;; that index, copied out whole (one work-item copies a lone tuple, whose components differ in
;; length) or taken apart by `get`.
;; data: hl_stencil.json
;; expect: [[[9.0], [5.0, 0.0, -2.0, 6.0]], [14.0, 15.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let t (map (lambda (w) (tuple (reduceSeq + 0.0f w) w)) (split #4 xs))
      (tuple (at 1 t)
             (toGlobal (mapGlb (lambda (i) (+ (at 0 (get #0 (at i t))) (at 3 (get #1 (at i t)))))
                               (generate #2 (lambda (j) j))))))))
