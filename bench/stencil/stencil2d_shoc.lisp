;; SHOC Stencil2D: 9-point stencil with centre, cardinal and diagonal weights (inputs; SHOC's defaults
;; are 0.25, 0.15, 0.05). As in SHOC, the input's outer ring is the halo: only the interior is computed,
;; so there is no padding and the result is (H-2) x (W-2):
;;   out[i][j] = wc * in[i+1][j+1]
;;             + wn * (in[i][j+1] + in[i+2][j+1] + in[i+1][j] + in[i+1][j+2])
;;             + wd * (in[i][j] + in[i][j+2] + in[i+2][j] + in[i+2][j+2])
;; size: H=8194 W=8194
;; data: stencil2d_shoc.json
;; expect: [[2.025, 1.9625001, 1.71875, 1.21875, 0.975, 0.99375004, 1.25625, 1.8312501], [2.2562501, 2.05, 1.5875001, 1.3625001, 1.30625, 1.7062501, 1.9125, 2.0687501], [2.6125, 2.125, 1.5375, 1.85625, 2.2125, 2.0375001, 2.24375, 1.88125], [2.8875, 2.04375, 1.6500001, 2.1000001, 2.51875, 2.20625, 1.75625, 1.6437501], [2.48125, 2.21875, 1.275, 1.7375001, 2.7125, 2.55625, 2.1625001, 1.8000001], [2.51875, 1.95, 1.31875, 1.1625, 1.7437501, 1.8687501, 2.01875, 1.9125]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (shoc nbh wc wn wd)
  (+ (+ (* wc (at2 1 1 nbh))
        (* wn (+ (+ (+ (at2 0 1 nbh) (at2 2 1 nbh)) (at2 1 0 nbh)) (at2 1 2 nbh))))
     (* wd (+ (+ (+ (at2 0 0 nbh) (at2 0 2 nbh)) (at2 2 0 nbh)) (at2 2 2 nbh)))))

(lift
  (H W)
  ((array-type (array-type float W) H) float float float)
  (lambda (data wc wn wd)
    (map (lambda (row) (map (lambda (nbh) (shoc nbh wc wn wd)) row))
         (slide2d #3 #1 data))))
