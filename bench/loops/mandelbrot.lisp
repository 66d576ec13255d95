;; Ikra's escape-time Mandelbrot for `lift bench` (examples/mandelbrot.lisp on a grid made on
;; the device): W × H points covering [-2.25, 0.75] × [-1.5, 1.5] at W = H = 4096 (a step of
;; 3/4096), each running z <- z^2 + c until |z|^2 >= 4 or 1000 steps, as a high-level `map`.
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
  ()
  (lambda ()
    (map (lambda (y) (map (lambda (x) (escape x y)) (generate W (lambda (i) (- (* (to-float i) 0.000732421875f) 2.25f)))))
      (generate H (lambda (j) (- (* (to-float j) 0.000732421875f) 1.5f))))))
