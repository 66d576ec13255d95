;; Rodinia hotspot3D, one step, clamped borders (Rodinia clamps each neighbour index to the grid);
;; tIn[z][y][x], pIn the power; n/s = y-1/y+1, w/e = x-1/x+1, b/t = z-1/z+1; the coefficients
;; cc cn cs ce cw ct cb, sdc = dt/Cap and amb (80) are the kernel's arguments (inputs here):
;;   out = cc*C + cn*N + cs*S + ce*E + cw*W + ct*T + cb*B + sdc*P + ct*amb
;; size: X=512 Y=512 Z=8
;; data: hotspot3d.json
;; expect: [[[269.91016, 272.33594, 270.1914, 271.23047, 270.6289, 265.45312], [258.75, 271.89453, 272.02734, 258.29688, 256.72266, 265.41797], [265.20703, 255.23828, 273.28125, 264.45703, 251.64844, 258.5586], [265.3203, 256.67188, 269.3047, 272.54297, 266.39062, 259.1328], [253.89062, 257.41016, 265.46094, 256.90625, 272.42578, 253.22656]], [[259.33203, 272.6953, 266.10938, 264.66797, 262.0078, 272.09375], [261.1797, 255.32422, 269.3203, 264.9336, 253.91016, 259.28906], [263.9453, 258.53906, 274.29297, 267.07422, 256.73047, 251.38281], [262.23438, 257.33203, 270.48828, 261.34766, 263.58203, 261.0039], [254.92578, 256.52344, 262.84766, 266.4922, 257.02344, 261.03906]], [[264.71094, 270.42188, 262.72266, 253.95312, 260.42578, 263.9297], [257.78906, 266.01562, 268.38672, 265.95703, 258.03906, 250.53516], [264.8711, 256.65234, 264.13672, 267.5078, 267.70703, 257.08203], [258.5078, 257.95703, 257.58203, 269.23438, 257.48828, 270.4336], [262.35547, 250.15234, 254.90234, 264.8125, 273.22266, 275.8672]]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (pad3d-clamp l r xsss) (map (lambda (plane) (pad2d-clamp l r plane)) (pad-clamp l r xsss)))
(define (slide3d s t xsss)
  (map (lambda (w) (map transpose (transpose w))) (slide s t (map (lambda (plane) (slide2d s t plane)) xsss))))
(define (at3 i j k nbh) (at k (at j (at i nbh))))
(define (map3d f xsss) (map (lambda (plane) (map (lambda (row) (map f row)) plane)) xsss))
(define (zip3d as bs)
  (map (lambda (pl) (map (lambda (r) (zip (get #0 r) (get #1 r))) (zip (get #0 pl) (get #1 pl)))) (zip as bs)))

(lift
  (X Y Z)
  ((array-type (array-type (array-type float X) Y) Z) (array-type (array-type (array-type float X) Y) Z)
   float float float float float float float float float)
  (lambda (tin pin cc cn cs ce cw ct cb sdc amb)
    (map3d (lambda (np)
             (let t (get #0 np)
               (+ (+ (+ (+ (+ (+ (+ (+ (* cc (at3 1 1 1 t)) (* cn (at3 1 0 1 t))) (* cs (at3 1 2 1 t)))
                                 (* ce (at3 1 1 2 t))) (* cw (at3 1 1 0 t)))
                           (* ct (at3 2 1 1 t))) (* cb (at3 0 1 1 t)))
                     (* sdc (get #1 np)))
                  (* ct amb))))
           (zip3d (slide3d #3 #1 (pad3d-clamp #1 #1 tin)) pin))))
