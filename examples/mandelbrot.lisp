;; Ikra's escape-time Mandelbrot (its first example), as a user writes it: a high-level `map`
;; over the points of a grid, each running z <- z^2 + c from z = 0 until |z|^2 >= 4 or 1000
;; steps (`iterate-until`, a loop of one work-item whose exit depends on the point), giving the
;; number of steps. The state is a tuple (re, im, steps) in private variables.
;; Expected values: scripts/loop_examples.py (numpy float32, checked to be the same in float64).
;; data: mandelbrot.json
;; expect: [[1, 1, 2, 3, 3, 3, 3, 4, 12, 4, 3, 2], [1, 2, 3, 3, 3, 4, 5, 7, 1000, 8, 5, 3], [1, 3, 3, 5, 5, 6, 1000, 1000, 1000, 1000, 34, 4], [1, 4, 5, 9, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 5], [1, 4, 5, 9, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 5], [1, 3, 3, 5, 5, 6, 1000, 1000, 1000, 1000, 34, 4], [1, 2, 3, 3, 3, 4, 5, 7, 1000, 8, 5, 3], [1, 1, 2, 3, 3, 3, 3, 4, 12, 4, 3, 2]]
(define (escape x y)
  (get #2
    (iterate-until #1000
      (lambda (prev next)
        (>= (+ (* (get #0 next) (get #0 next)) (* (get #1 next) (get #1 next))) 4.0f))
      (lambda (z)
        (let zr (get #0 z)
          (let zi (get #1 z)
            (tuple (+ (- (* zr zr) (* zi zi)) x) (+ (* 2.0f (* zr zi)) y) (+ (get #2 z) 1)))))
      (tuple 0.0f 0.0f 0))))
(lift
  (W H)
  ((array-type float W) (array-type float H))
  (lambda (xs ys)
    (map (lambda (y) (map (lambda (x) (escape x y)) xs)) ys)))
