;; N-Body: one time step of the NVIDIA/AMD SDK all-pairs simulation. Positions are float4 with
;; the mass in w, velocities float4; each body accumulates the acceleration from every body
;; (itself included: its r is 0, so it adds nothing), then moves:
;;   r = p_j.xyz - p_i.xyz, a_i = sum_j r * m_j / (r.r + espSqr)^(3/2)
;;   pos' = pos + vel dt + a dt^2 / 2 (xyz; w, the mass, kept), vel' = vel + a dt (xyz)
;; The result per body is (new position, new velocity).
;; CGO'17 large size: N = 131,072 bodies (--size N=131072).
;; data: nbody.json
;; expect: [[[0.2992344, 0.34637344, 0.47750598, 1.75], [-0.23112488, -0.7290125, 0.07004786, 0.0]], [[0.1978421, 0.7298835, 0.446768, 0.5], [-0.042263154, -1.1609321, 1.3241439, 0.0]], [[0.5753649, 0.2772046, 0.468988, 1.75], [-0.52208084, 0.34263676, 0.7519039, 0.0]], [[0.7495818, 0.2743066, 0.46112606, 1.75], [-1.1283455, 0.9444527, -0.8109916, 0.0]], [[0.43431735, 0.45609814, 0.6476653, 1.25], [0.22453885, -0.97621495, -0.81867754, 0.0]], [[0.2865467, 0.6180713, 0.6604362, 1.5], [0.4173736, -0.3054293, 0.03348992, 0.0]], [[0.32976285, 0.16981718, 0.39275798, 1.5], [0.0131027065, 1.3585374, -0.35793608, 0.0]], [[0.0036423488, 0.71828645, 0.75135535, 1.5], [0.5291388, -1.1287081, -0.23915736, 0.0]]]
(define (xyz v) (vec (vget #0 v) (vget #1 v) (vget #2 v) 0.0f))
(define (acceleration pi pj espSqr)
  (let r (xyz (- pj pi))
    (let inv (/ 1.0f (sqrt (+ (dot r r) espSqr)))
      (* r (* (* (* inv inv) inv) (vget #3 pj))))))
(define (advance pos vel acc dt)
  (tuple (+ pos (xyz (+ (* vel dt) (* acc (* 0.5f (* dt dt))))))
         (+ vel (xyz (* acc dt)))))

(lift
  (N)
  ((array-type (vector-type float 4) N) (array-type (vector-type float 4) N) float float)
  (lambda (pos vel espSqr deltaT)
    (join
      (map (lambda (pv)
             (map (lambda (acc) (advance (get #0 pv) (get #1 pv) acc deltaT))
                  (reduce + (vec 0.0f 0.0f 0.0f 0.0f)
                          (map (lambda (pj) (acceleration (get #0 pv) pj espSqr)) pos))))
           (zip pos vel)))))
