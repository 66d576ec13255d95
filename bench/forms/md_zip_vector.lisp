;; md (SHOC): f_i = sum_{j in nb(i), r2 < cutsq} d r2i r6i (lj1 r6i - lj2), d = p_i - p_j, r2 = |d|^2, r2i = 1/r2, r6i = r2i^3
;; size: N=73728 M=128
;; form: map over zip pos neigh; per neighbour index a float4 contribution (vector arithmetic, r2 with dot on the float4 difference, if for the cutoff), reduce + from a zero vector, join
;; data: data/md.json
;; expect: [[-0.0279277134,0.00164095549,0.468980578,0.0],[0.0418297536,0.587714916,-0.06570708,0.0],[0.0,0.42018096,0.14006032,0.0],[0.0874216035,-0.0607264795,0.0539199767,0.0],[0.32407062,-0.00177693881,0.0390392569,0.0],[-0.0553964745,-0.0443171796,0.0,0.0],[0.0168831047,-0.185714152,0.0,0.0],[-0.0215089729,-0.0215089729,0.00645269186,0.0],[-0.0704184964,-0.180275921,-0.0380905243,0.0],[0.125251427,0.0529758871,-0.491257724,0.0]]
(lift (N M) ((array-type (vector-type float 4) N) (array-type (array-type int M) N) float float float)
  (lambda (pos neigh cutsq lj1 lj2)
    (join
      (map (lambda (pn)
             (reduce + (vec 0.0f 0.0f 0.0f 0.0f)
               (map (lambda (j)
                      (let d (- (get #0 pn) (at j pos))
                        (let r2 (dot d d)
                          (let r2i (/ 1.0f r2)
                            (let r6i (* r2i (* r2i r2i))
                              (if (< r2 cutsq)
                                  (* d (* r2i (* r6i (- (* lj1 r6i) lj2))))
                                  (vec 0.0f 0.0f 0.0f 0.0f)))))))
                    (get #1 pn))))
           (zip pos neigh)))))
