;; Host-level `iterate` whose state is a filter result: each step damps every value and keeps
;; those still above 0.45, so the state shrinks (16, 12, 12, 12, 11, 10, 9 values). Its
;; length stays on the device, where each step's kernel reads it; the two state buffers have
;; the input's capacity, and only the result's 9 values cross back to the host.
;; data: host_filter_loop.json
;; expect: [0.480111, 0.6129746, 0.6797878, 0.7566161, 0.8364133, 0.8896276, 0.9243535, 0.9600236, 0.8141538]
(define (damp x) (* x (- 0.9f (* 0.05f x))))
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (iterate #6
      (lambda (s) (filter (lambda (x) (> x 0.45f)) (map damp s)))
      xs)))
