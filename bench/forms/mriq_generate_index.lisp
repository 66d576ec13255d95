;; mri-q (Parboil ComputeQ): Q[x] = sum_k phiMag[k] (cos e, sin e), e = 2 pi (kx[k] x + ky[k] y + kz[k] z)
;; size: X=262144 K=2048
;; form: explicit indices: generate X over points and generate K over samples, every array read with at; defined complex add; result with at 0
;; data: data/mriq.json
;; expect: [[0.464457195,-3.52143885],[2.98285536,3.79307157],[1.93827739,-6.5787271],[5.79846412,-2.48890309],[-2.66849865,0.418781523],[3.51543123,-0.107183032],[-2.167455,3.23681396],[3.22249982,-2.70830202]]
(define (cadd a b) (tuple (+ (get #0 a) (get #0 b)) (+ (get #1 a) (get #1 b))))
(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float K)
             (array-type float X) (array-type float X) (array-type float X))
  (lambda (kx ky kz phiMag x y z)
    (map (lambda (i)
           (at 0 (reduce cadd (tuple 0.0f 0.0f)
                   (map (lambda (k)
                          (let e (* 2.0f (* 3.1415927f (+ (* (at k kx) (at i x)) (+ (* (at k ky) (at i y)) (* (at k kz) (at i z))))))
                            (tuple (* (at k phiMag) (cos e)) (* (at k phiMag) (sin e)))))
                        (generate K (lambda (k) k))))))
         (generate X (lambda (i) i)))))
