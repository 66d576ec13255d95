;; n-body: a_i = sum_j r m_j / (r.r + eps)^(3/2), r = p_j - p_i (3-D, mass in w); pos' = pos + v dt + a dt^2/2, vel' = v + a dt; result (pos', vel') per body
;; size: N=131072
;; form: explicit indices: generate N for i and j with (at i pos) / (at j pos); r as a float4 difference with the w lane masked by multiplying with (vec 1 1 1 0); d2 * sqrt(d2) for the 3/2 power; commuted vector add; the reduce result used directly (mapped) then join
;; data: data/nbody.json
;; expect: [[[-1.48536575,1.34604223,0.560400037,1.75],[0.109147936,-0.338324329,-0.533599407,0.0]],[[-0.512802202,-1.61719492,0.888226651,1.25],[0.920164775,1.12488132,0.0866264188,0.0]],[[-0.701360509,1.47860237,-0.636734201,0.75],[-0.596768146,-0.217362135,-0.0627472149,0.0]],[[0.667277535,-1.13294526,0.127371186,0.75],[0.301440562,0.997875913,-0.962061025,0.0]],[[-1.85295436,1.03124686,-1.74197351,1.75],[-0.772269838,-0.750050236,-0.87157622,0.0]],[[0.976665163,1.09041445,-0.247799814,1.5],[0.87664261,-0.178368731,-1.21479702,0.0]],[[1.1195865,0.126827083,1.5859142,1.875],[-1.08661607,-0.970766675,0.624627138,0.0]],[[1.10465405,1.52740295,-1.67687493,2.0],[0.799464784,-0.81155281,0.670001187,0.0]],[[-1.90869821,0.761135579,0.99236335,1.75],[0.835828596,1.17816927,0.877813599,0.0]],[[1.03250462,1.33480132,-0.221841144,0.875],[0.0200738995,0.481821161,1.57554169,0.0]]]
(lift (N) ((array-type (vector-type float 4) N) (array-type (vector-type float 4) N) float float)
  (lambda (pos vel eps dt)
    (join
      (map (lambda (i)
             (map (lambda (a)
                    (let v (at i vel)
                      (tuple (+ (+ (at i pos) (* dt v)) (* (* 0.5f (* dt dt)) a))
                             (+ v (* dt a)))))
                  (reduce (lambda (x y) (+ y x)) (vec 0.0f 0.0f 0.0f 0.0f)
                    (map (lambda (j)
                           (let r (* (- (at j pos) (at i pos)) (vec 1.0f 1.0f 1.0f 0.0f))
                             (let d2 (+ (dot r r) eps)
                               (* (/ (vget #3 (at j pos)) (* d2 (sqrt d2))) r))))
                         (generate N (lambda (j) j))))))
           (generate N (lambda (i) i))))))
