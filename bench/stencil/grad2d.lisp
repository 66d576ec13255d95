;; grad2d, gradient magnitude (Lift CGO'18 suite: grad2d, from the PPCG stencil benchmarks), clamped borders:
;;   out[i][j] = C + 1 / sqrt(0.0001 + (C-N)^2 + (C-S)^2 + (C-E)^2 + (C-W)^2)
;;   C = in[i][j], N = in[i-1][j], S = in[i+1][j], W = in[i][j-1], E = in[i][j+1], indices clamped
;; size: H=8192 W=8192
;; data: grad2d.json
;; expect: [[3.1635683, 2.5559895, 2.5460045, 1.8479679, 2.9253936, 3.2082148, 2.2937355, 0.5771821, 1.8177671], [2.117229, 1.1209085, 1.6176891, 2.5148098, 2.1209085, 1.9330957, 0.63759834, 1.8635604, 2.2459085], [1.04633, 1.8040043, 1.20385, 2.2173598, 0.3931755, 1.6114397, 2.2480521, 1.5306963, 0.72723454], [2.3040042, 2.405971, 2.497787, 2.523366, 1.2939787, 2.3450968, 2.5660782, 1.9020052, 2.219771], [2.1664548, 0.7621408, 1.6114397, 2.203657, 1.3728383, 2.218244, 1.3334501, 2.36643, 0.84477097], [2.023366, 0.603942, 0.80737776, 2.1668406, 2.443736, 2.2890723, 1.8909485, 2.468244, 2.120154], [1.3405235, 2.3392022, 2.2821445, 1.4501089, 2.1635683, 2.31492, 1.2659485, 2.0159485, 6.772825]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (sq x) (* x x))
(define (grad n s w e c)
  (+ c (/ 1.0f (sqrt (+ (+ (+ (+ 0.0001f (sq (- c n))) (sq (- c s))) (sq (- c e))) (sq (- c w)))))))

(lift
  (H W)
  ((array-type (array-type float W) H))
  (lambda (img)
    (map (lambda (row)
           (map (lambda (nbh) (grad (at2 0 1 nbh) (at2 2 1 nbh) (at2 1 0 nbh) (at2 1 2 nbh) (at2 1 1 nbh)))
                row))
         (slide2d #3 #1 (pad2d-clamp #1 #1 img)))))
