;; mri-q (Parboil ComputeQ): Q[x] = sum_k phiMag[k] (cos e, sin e), e = 2 pi (kx[k] x + ky[k] y + kz[k] z)
;; size: X=262144 K=2048
;; form: samples zipped as (phiMag, kz, ky, kx) (reversed order), a commuted tuple-add lambda, the reduce result mapped to a tuple then joined; points zipped (z, y, x)
;; data: data/mriq.json
;; expect: [[0.464457195,-3.52143885],[2.98285536,3.79307157],[1.93827739,-6.5787271],[5.79846412,-2.48890309],[-2.66849865,0.418781523],[3.51543123,-0.107183032],[-2.167455,3.23681396],[3.22249982,-2.70830202]]
(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float K)
             (array-type float X) (array-type float X) (array-type float X))
  (lambda (kx ky kz phiMag x y z)
    (join
      (map (lambda (pzyx)
             (reduce (lambda (a b) (tuple (+ (get #0 b) (get #0 a)) (+ (get #1 b) (get #1 a))))
                     (tuple 0.0f 0.0f)
                     (map (lambda (s)
                            (let e (* (+ (+ (* (get #3 s) (get #2 pzyx)) (* (get #2 s) (get #1 pzyx))) (* (get #1 s) (get #0 pzyx)))
                                      6.2831855f)
                              (tuple (* (cos e) (get #0 s)) (* (sin e) (get #0 s)))))
                          (zip phiMag kz ky kx))))
           (zip z y x)))))
