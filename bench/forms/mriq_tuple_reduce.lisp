;; mri-q (Parboil ComputeQ): Q[x] = sum_k phiMag[k] (cos e, sin e), e = 2 pi (kx[k] x + ky[k] y + kz[k] z)
;; size: X=262144 K=2048
;; form: per point, map over zip of the four k arrays to a (re, im) tuple, reduce with a tuple-add lambda, join the one-element results
;; data: data/mriq.json
;; expect: [[0.464457195,-3.52143885],[2.98285536,3.79307157],[1.93827739,-6.5787271],[5.79846412,-2.48890309],[-2.66849865,0.418781523],[3.51543123,-0.107183032],[-2.167455,3.23681396],[3.22249982,-2.70830202]]
(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float K)
             (array-type float X) (array-type float X) (array-type float X))
  (lambda (kx ky kz phiMag x y z)
    (join
      (map (lambda (pt)
             (reduce (lambda (a b) (tuple (+ (get #0 a) (get #0 b)) (+ (get #1 a) (get #1 b))))
                     (tuple 0.0f 0.0f)
                     (map (lambda (k)
                            (let e (* 6.2831855f (+ (* (get #0 k) (get #0 pt))
                                                    (+ (* (get #1 k) (get #1 pt)) (* (get #2 k) (get #2 pt)))))
                              (tuple (* (get #3 k) (cos e)) (* (get #3 k) (sin e)))))
                          (zip kx ky kz phiMag))))
           (zip x y z)))))
