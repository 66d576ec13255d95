;; MRI-Q, PhiMag: Parboil's first kernel, the squared magnitude of each k-space sample, which
;; the Q computation (mriq.lisp) weighs its terms by.
;;   phiMag[k] = phiR[k]^2 + phiI[k]^2
;; CGO'17 large size: K = 2,048 samples (--size K=2048); MRI-Q is timed as PhiMag + Q.
;; data: mriq_phimag.json
;; expect: [3.625, 3.625, 1.25, 0.0, 3.25, 4.0625, 0.8125, 2.3125]
(lift
  (K)
  ((array-type float K) (array-type float K))
  (lambda (phiR phiI)
    (map (lambda (p) (+ (* (get #0 p) (get #0 p)) (* (get #1 p) (get #1 p)))) (zip phiR phiI))))
