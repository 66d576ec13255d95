;; MRI-Q: Parboil's Q computation (the ComputeQ kernel; PhiMag = phiR^2 + phiI^2 is an input).
;;   Q[x] = sum_k phiMag[k] * (cos e, sin e),   e = 2 pi (kx[k] x.x + ky[k] x.y + kz[k] x.z)
;; a (real, imag) tuple per voxel.
;; CGO'17 large size: X = 262,144 voxels, K = 2,048 samples (--size X=262144 --size K=2048).
;; data: mriq.json
;; expect: [[-0.88338226, -0.27213794], [2.6439629, -3.8835168], [2.455235, 3.6887248], [1.2618501, 2.8539274], [1.1884851, -2.3444114], [2.340504, -0.25528425]]
(define two-pi 6.2831853f)
(define (complex-add a b) (tuple (+ (get #0 a) (get #0 b)) (+ (get #1 a) (get #1 b))))

(lift
  (X K)
  ((array-type float X) (array-type float X) (array-type float X)
   (array-type float K) (array-type float K) (array-type float K) (array-type float K))
  (lambda (x y z kx ky kz phiMag)
    (join
      (map (lambda (v)
             (reduce complex-add (tuple 0.0f 0.0f)
                     (map (lambda (k)
                            (let e (* two-pi (+ (+ (* (get #0 k) (get #0 v)) (* (get #1 k) (get #1 v)))
                                                (* (get #2 k) (get #2 v))))
                              (tuple (* (get #3 k) (cos e)) (* (get #3 k) (sin e)))))
                          (zip kx ky kz phiMag))))
           (zip x y z)))))
