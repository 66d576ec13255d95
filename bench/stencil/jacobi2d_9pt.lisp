;; Jacobi 2-D 9-point (Lift CGO'18 suite: j2d9pt, from the PPCG stencil benchmarks), clamped borders:
;;   out[i][j] = (7*NW + 5*N + 9*NE + 12*W + 15*C + 12*E + 9*SW + 5*S + 7*SE) / 118
;;   NW = in[i-1][j-1], N = in[i-1][j], ..., SE = in[i+1][j+1]; indices clamped to the grid
;; size: H=8192 W=8192
;; data: jacobi2d_9pt.json
;; expect: [[1.726695, 1.2489407, 1.0243644, 0.96822035, 1.5699153, 1.3368644, 1.2627119, 0.7055085, 0.7383475], [1.5254238, 1.4459746, 1.625, 1.2902542, 1.4629238, 1.1694915, 1.1302966, 1.0381356, 0.9989407], [1.4618644, 1.4777542, 1.6430085, 1.1875, 1.3103814, 1.226695, 1.592161, 1.5243644, 1.5349576], [1.5254238, 1.335805, 1.1991526, 0.8739407, 1.164195, 1.6832627, 1.782839, 1.9364407, 1.7838984], [1.6716101, 1.3877119, 1.213983, 1.0105932, 1.3601695, 1.5826272, 1.7425847, 1.753178, 1.601695], [1.8538135, 1.7192796, 1.621822, 1.3908899, 1.246822, 1.6419492, 1.4798728, 1.5201272, 1.1980932], [1.8474576, 1.8940678, 1.6461865, 1.2923728, 1.0042373, 1.5052966, 1.2584746, 1.4713984, 0.9862288]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (jacobi nw n ne w c e sw s se)
  (/ (+ (+ (+ (+ (+ (+ (+ (+ (* 7.0f nw) (* 5.0f n)) (* 9.0f ne)) (* 12.0f w)) (* 15.0f c)) (* 12.0f e))
                 (* 9.0f sw)) (* 5.0f s)) (* 7.0f se))
     118.0f))

(lift
  (H W)
  ((array-type (array-type float W) H))
  (lambda (grid)
    (map (lambda (row)
           (map (lambda (nbh)
                  (jacobi (at2 0 0 nbh) (at2 0 1 nbh) (at2 0 2 nbh)
                          (at2 1 0 nbh) (at2 1 1 nbh) (at2 1 2 nbh)
                          (at2 2 0 nbh) (at2 2 1 nbh) (at2 2 2 nbh)))
                row))
         (slide2d #3 #1 (pad2d-clamp #1 #1 grid)))))
