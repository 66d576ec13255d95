;; md (SHOC): f_i = sum_{j in nb(i), r2 < cutsq} d r2i r6i (lj1 r6i - lj2), d = p_i - p_j, r2 = |d|^2, r2i = 1/r2, r6i = r2i^3
;; size: N=73728 M=128
;; form: neighbour positions gathered first into an N x M array (let), then zip neigh-positions with pos (swapped), the cutoff as a 0/1 factor, commuted vector add lambda, at 0
;; data: data/md.json
;; expect: [[-0.0279277134,0.00164095549,0.468980578,0.0],[0.0418297536,0.587714916,-0.06570708,0.0],[0.0,0.42018096,0.14006032,0.0],[0.0874216035,-0.0607264795,0.0539199767,0.0],[0.32407062,-0.00177693881,0.0390392569,0.0],[-0.0553964745,-0.0443171796,0.0,0.0],[0.0168831047,-0.185714152,0.0,0.0],[-0.0215089729,-0.0215089729,0.00645269186,0.0],[-0.0704184964,-0.180275921,-0.0380905243,0.0],[0.125251427,0.0529758871,-0.491257724,0.0]]
(lift (N M) ((array-type (vector-type float 4) N) (array-type (array-type int M) N) float float float)
  (lambda (pos neigh cutsq lj1 lj2)
    (let npos (map (lambda (row) (map (lambda (j) (at j pos)) row)) neigh)
      (map (lambda (np)
             (at 0 (reduce (lambda (a b) (+ b a)) (vec 0.0f 0.0f 0.0f 0.0f)
                     (map (lambda (pj)
                            (let d (- (get #1 np) pj)
                              (let r2 (+ (+ (* (vget #0 d) (vget #0 d)) (* (vget #1 d) (vget #1 d))) (* (vget #2 d) (vget #2 d)))
                                (let r6i (/ 1.0f (* r2 (* r2 r2)))
                                  (let inside (if (< r2 cutsq) 1.0f 0.0f)
                                    (* d (* inside (* (/ r6i r2) (- (* lj1 r6i) lj2)))))))))
                          (get #0 np)))))
           (zip npos pos)))))
