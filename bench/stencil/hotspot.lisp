;; Rodinia hotspot (2-D), one step of the thermal simulation, clamped borders:
;;   out[i][j] = T + sdc * (P + (S + N - 2*T) * ry1 + (E + W - 2*T) * rx1 + (amb - T) * rz1)
;;   T = temp[i][j], N = temp[i-1][j], S = temp[i+1][j], W = temp[i][j-1], E = temp[i][j+1] (clamped),
;;   P = power[i][j]; sdc = step/Cap, rx1 = 1/Rx, ry1 = 1/Ry, rz1 = 1/Rz and amb (80 in Rodinia) are
;;   the kernel's arguments (inputs here)
;; size: H=8192 W=8192
;; data: hotspot.json
;; expect: [[329.2461, 325.5547, 326.32422, 328.51172, 324.28125, 327.2422, 327.2461, 318.2578, 314.89844], [319.15625, 320.2461, 327.85547, 327.0, 317.40625, 322.09766, 326.03516, 318.7461, 325.78516], [316.41797, 321.70312, 326.20312, 320.8672, 318.8828, 320.09375, 324.98828, 321.21875, 329.60938], [321.08984, 322.16406, 322.70312, 323.63672, 322.8125, 323.23047, 329.84766, 327.28516, 328.39062], [325.8047, 323.48828, 321.32812, 327.8203, 321.96875, 319.09375, 325.32422, 321.13672, 326.94922], [323.71875, 317.51562, 315.91797, 320.03516, 315.63672, 316.77344, 322.92188, 327.4414, 323.35938], [328.58203, 328.8672, 327.39453, 324.58594, 321.375, 321.33594, 319.41406, 322.03516, 320.48438]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (zip2d as bs) (map (lambda (r) (zip (get #0 r) (get #1 r))) (zip as bs)))

(lift
  (H W)
  ((array-type (array-type float W) H) (array-type (array-type float W) H) float float float float float)
  (lambda (temp power sdc rx1 ry1 rz1 amb)
    (map (lambda (row)
           (map (lambda (np)
                  (let nbh (get #0 np)
                    (let t (at2 1 1 nbh)
                      (+ t (* sdc (+ (+ (+ (get #1 np)
                                           (* (- (+ (at2 2 1 nbh) (at2 0 1 nbh)) (* 2.0f t)) ry1))
                                        (* (- (+ (at2 1 2 nbh) (at2 1 0 nbh)) (* 2.0f t)) rx1))
                                     (* (- amb t) rz1)))))))
                row))
         (zip2d (slide2d #3 #1 (pad2d-clamp #1 #1 temp)) power))))
