;; `to-float` and `to-int` (truncates toward zero, as a C cast): each int k gives
;; (k / 2 as a float, k * 1.5 truncated to an int).
;; data: conversions.json
;; expect: [[0.0, 0], [0.5, 1], [-0.5, -1], [1.5, 4], [-1.5, -4], [3.5, 10], [50.0, 150]]
(lift
  (N)
  ((array-type int N))
  (lambda (ks)
    (toGlobal
      (mapGlb (lambda (k) (tuple (/ (to-float k) 2.0f) (to-int (* (to-float k) 1.5f))))
              ks))))
