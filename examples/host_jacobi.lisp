;; Host-level `iterate-until`: a 1-D Jacobi stencil (clamped boundary) applied until the
;; largest change of a step is below 0.001, at most 500 steps. Each step launches the stencil
;; kernel and the convergence test; only the test's boolean crosses to the host.
;; data: host_jacobi.json
;; expect: [0.43024787, 0.43265247, 0.43633556, 0.43965945, 0.44135317, 0.4411552, 0.4398576, 0.43874034]
(define eps 0.001f)
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (iterate-until #500
      (lambda (prev next)
        (join
          (mapGlb
            (lambda (all)
              (mapSeq (lambda (m) (< m eps))
                (reduceSeq (lambda (a pq) (max a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all)))
            (split N (zip prev next)))))
      (lambda (s)
        (mapGlb
          (lambda (w) (* (+ (+ (at 0 w) (at 1 w)) (at 2 w)) (/ 1.0f 3.0f)))
          (slide #3 #1 (pad-clamp #1 #1 s))))
      xs)))
