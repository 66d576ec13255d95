;; Jacobi 2-D 5-point (Lift CGO'18 suite: j2d5pt, from the PPCG stencil benchmarks), clamped borders:
;;   out[i][j] = (5*N + 12*W + 15*C + 12*E + 5*S) / 118
;;   C = in[i][j], N = in[i-1][j], S = in[i+1][j], W = in[i][j-1], E = in[i][j+1], indices clamped
;; size: H=8192 W=8192
;; data: jacobi2d_5pt.json
;; expect: [[0.7595339, 0.97775424, 1.1620762, 0.9957627, 0.5911017, 0.47033897, 1.0519068, 1.161017, 0.7086864], [0.69067794, 0.7934322, 0.9216102, 0.9088983, 0.7595339, 0.7341102, 0.8379237, 0.91101694, 0.85169494], [0.23728813, 0.52754235, 0.8506356, 1.1133474, 1.1461865, 1.1377119, 0.8463983, 0.8368644, 0.68114406], [0.9120763, 0.5116525, 0.4470339, 0.5095339, 0.7923729, 0.9385593, 0.75317794, 0.4894068, 0.6493644], [1.088983, 0.6864407, 0.6440678, 0.46822035, 0.6398305, 0.56885594, 0.56567794, 0.4417373, 0.68432206], [0.7690678, 0.7065678, 1.029661, 1.2097458, 0.84745765, 0.99682206, 0.5794492, 0.7786017, 0.72775424], [1.164195, 0.8463983, 0.8167373, 0.64724576, 0.8283898, 0.95974576, 0.9947034, 0.6663136, 0.59851694]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (jacobi n w c e s)
  (/ (+ (+ (+ (+ (* 5.0f n) (* 12.0f w)) (* 15.0f c)) (* 12.0f e)) (* 5.0f s)) 118.0f))

(lift
  (H W)
  ((array-type (array-type float W) H))
  (lambda (grid)
    (map (lambda (row)
           (map (lambda (nbh)
                  (jacobi (at2 0 1 nbh) (at2 1 0 nbh) (at2 1 1 nbh) (at2 1 2 nbh) (at2 2 1 nbh)))
                row))
         (slide2d #3 #1 (pad2d-clamp #1 #1 grid)))))
