;; md (SHOC): f_i = sum_{j in nb(i), r2 < cutsq} d r2i r6i (lj1 r6i - lj2), d = p_i - p_j, r2 = |d|^2, r2i = 1/r2, r6i = r2i^3
;; size: N=73728 M=128
;; form: zip neigh pos (index list first); a defined lj-scale helper with r6i = (pow r2i 3.0f); r2 = dot of the difference with itself minus its w*w; defined float4 add; at 0
;; data: data/md.json
;; expect: [[-0.0279277134,0.00164095549,0.468980578,0.0],[0.0418297536,0.587714916,-0.06570708,0.0],[0.0,0.42018096,0.14006032,0.0],[0.0874216035,-0.0607264795,0.0539199767,0.0],[0.32407062,-0.00177693881,0.0390392569,0.0],[-0.0553964745,-0.0443171796,0.0,0.0],[0.0168831047,-0.185714152,0.0,0.0],[-0.0215089729,-0.0215089729,0.00645269186,0.0],[-0.0704184964,-0.180275921,-0.0380905243,0.0],[0.125251427,0.0529758871,-0.491257724,0.0]]
(define (lj-scale r2 cutsq lj1 lj2)
  (let r2i (/ 1.0f r2)
    (let r6i (pow r2i 3.0f)
      (if (>= r2 cutsq) 0.0f (* r2i (* r6i (- (* lj1 r6i) lj2)))))))
(define (add4 a b) (+ a b))
(lift (N M) ((array-type (vector-type float 4) N) (array-type (array-type int M) N) float float float)
  (lambda (pos neigh cutsq lj1 lj2)
    (map (lambda (np)
           (at 0 (reduce add4 (vec 0.0f 0.0f 0.0f 0.0f)
                   (map (lambda (j)
                          (let d (- (get #1 np) (at j pos))
                            (* (lj-scale (- (dot d d) (* (vget #3 d) (vget #3 d))) cutsq lj1 lj2) d)))
                        (get #0 np)))))
         (zip neigh pos))))
