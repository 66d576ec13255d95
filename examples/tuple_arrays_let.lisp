;; Tuples holding arrays as intermediates: per window a (min, max) pair of one-element arrays,
;; computed by one kernel into two component buffers, then read back by the next kernel; and
;; inside a kernel a tuple of a row and its sum, bound by `let` and taken apart.
;; data: hl_stencil.json
;; expect: [[2.0, [5.0]], [3.0, [7.0]], [4.0, [10.0]], [5.0, [13.0]], [5.0, [10.0]], [5.0, [8.0]], [6.0, [10.0]], [6.0, [10.0]]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let t (map (lambda (w) (tuple (reduceSeq min 3.4e38f w) (reduceSeq max -3.4e38f w)))
                (slide #3 #1 (pad-clamp #1 #1 xs)))
      (map (lambda (p)
             (let q (tuple (mapSeq (lambda (x) (* x 2.0f)) (get #1 p)) (get #0 p))
               (tuple (at 0 (get #1 p)) (reduceSeq + (at 0 (get #0 q)) (get #1 q)))))
           t))))
