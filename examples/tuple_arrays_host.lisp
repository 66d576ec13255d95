;; Tuples holding arrays bound at host level: a tuple of a sum and a mapped array is computed
;; component by component (each in kernels of its own), and a tuple picked out of an array of
;; them by `at` is copied into component buffers before the next kernel reads it.
;; data: hl_stencil.json
;; expect: [[[21.0, 23.0, 25.0, 27.0, 29.0, 19.0, 15.0, 31.0], [5.0, 0.0, -2.0, 6.0]], [9.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let p (tuple (reduceSeq + 0.0f xs) (map (lambda (x) (* x 2.0f)) xs))
      (let t (map (lambda (w) (tuple (reduceSeq + 0.0f w) w)) (split #4 xs))
        (let u (at 1 t)
          (tuple (tuple (map (lambda (x) (+ x (at 0 (get #0 p)))) (get #1 p)) (get #1 u))
                 (get #0 u)))))))
