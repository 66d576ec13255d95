;; nn (Rodinia): d[i] = sqrt((lat - x_i)^2 + (lng - y_i)^2), points (x, y) as tuples
;; size: N=33554432
;; form: index array from generate N, point read with (at i pts); squares with pow 2.0f; lng term added first
;; data: data/nn.json
;; expect: [9.61281696,5.19915859,11.3646931,7.60037006,4.58938994,5.0062461,7.14252231,3.01039864,8.36379848,6.70820393,9.67357871,8.82645172,5.00312402,10.0824724,11.6619038,5.37645329,10.006248,9.13270223,3.0,4.52941773]
(lift (N) ((array-type (tuple-type float float) N) float float)
  (lambda (pts lat lng)
    (map (lambda (i)
           (let p (at i pts)
             (sqrt (+ (pow (- lng (get #1 p)) 2.0f) (pow (- lat (get #0 p)) 2.0f)))))
         (generate N (lambda (i) i)))))
