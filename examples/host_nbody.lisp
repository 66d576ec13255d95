;; Host-level `iterate` (a host section): 1,000 steps of a 2-D n-body simulation (Euler steps,
;; softened gravity). The loop runs on the host and launches the one kernel of its function
;; each step over two device buffers; the bodies never cross to the host between steps.
;; data: host_nbody.json
;; expect: [[0.34098154, 0.068064816, 0.072221123, 0.016365299], [-0.12368518, 0.13831465, -0.059400547, 0.078162976], [-0.099773861, -0.16340826, -0.094279811, -0.153193], [0.21722992, -0.39747569, 0.026088336, -0.035940766], [0.087189496, -0.067091957, 0.051126573, 0.046809908], [0.042989735, -0.14063452, -0.0027821371, -0.065978564]]
(define dt 0.01f)
(define eps 0.05f)
(lift
  (N)
  ((array-type (tuple-type float float float float) N) (array-type float N))
  (lambda (bodies masses)
    (iterate #1000
      (lambda (s)
        (join
          (mapGlb
            (lambda (b)
              (mapSeq
                (lambda (a)
                  (let vx (+ (get #2 b) (* dt (get #0 a)))
                    (let vy (+ (get #3 b) (* dt (get #1 a)))
                      (tuple (+ (get #0 b) (* dt vx)) (+ (get #1 b) (* dt vy)) vx vy))))
                (reduceSeq
                  (lambda (acc om)
                    (let p (get #0 om)
                      (let dx (- (get #0 p) (get #0 b))
                        (let dy (- (get #1 p) (get #1 b))
                          (let r2 (+ (+ (* dx dx) (* dy dy)) eps)
                            (let inv (/ (get #1 om) (* r2 (sqrt r2)))
                              (tuple (+ (get #0 acc) (* dx inv)) (+ (get #1 acc) (* dy inv)))))))))
                  (tuple 0.0f 0.0f)
                  (zip s masses))))
            s)))
      bodies)))
