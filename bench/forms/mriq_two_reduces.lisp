;; mri-q (Parboil ComputeQ): Q[x] = sum_k phiMag[k] (cos e, sin e), e = 2 pi (kx[k] x + ky[k] y + kz[k] z)
;; size: X=262144 K=2048
;; form: per point, the angles bound with let as an array, then two separate scalar reduces (real and imaginary) each taken with at 0 into a tuple
;; data: data/mriq.json
;; expect: [[0.464457195,-3.52143885],[2.98285536,3.79307157],[1.93827739,-6.5787271],[5.79846412,-2.48890309],[-2.66849865,0.418781523],[3.51543123,-0.107183032],[-2.167455,3.23681396],[3.22249982,-2.70830202]]
(define pi2 6.2831855f)
(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float K)
             (array-type float X) (array-type float X) (array-type float X))
  (lambda (kx ky kz phiMag x y z)
    (map (lambda (p)
           (let angles (map (lambda (k) (* pi2 (+ (+ (* (get #0 p) (get #0 k)) (* (get #1 p) (get #1 k)))
                                                  (* (get #2 p) (get #2 k)))))
                            (zip kx ky kz))
             (tuple (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (cos (get #0 am)))) (zip angles phiMag))))
                    (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (sin (get #0 am)))) (zip angles phiMag)))))))
         (zip x y z))))
