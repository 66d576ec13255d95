;; md (SHOC): f_i = sum_{j in nb(i), r2 < cutsq} d r2i r6i (lj1 r6i - lj2), d = p_i - p_j, r2 = |d|^2, r2i = 1/r2, r6i = r2i^3
;; size: N=73728 M=128
;; form: index i from generate N with at; explicit x/y/z components with vget; a defined pair-force returning an (fx, fy, fz) tuple; tuple-add reduce; the float4 rebuilt with vec and w = 0
;; data: data/md.json
;; expect: [[-0.0279277134,0.00164095549,0.468980578,0.0],[0.0418297536,0.587714916,-0.06570708,0.0],[0.0,0.42018096,0.14006032,0.0],[0.0874216035,-0.0607264795,0.0539199767,0.0],[0.32407062,-0.00177693881,0.0390392569,0.0],[-0.0553964745,-0.0443171796,0.0,0.0],[0.0168831047,-0.185714152,0.0,0.0],[-0.0215089729,-0.0215089729,0.00645269186,0.0],[-0.0704184964,-0.180275921,-0.0380905243,0.0],[0.125251427,0.0529758871,-0.491257724,0.0]]
(define (pair-force pi pj cutsq lj1 lj2)
  (let dx (- (vget #0 pi) (vget #0 pj))
    (let dy (- (vget #1 pi) (vget #1 pj))
      (let dz (- (vget #2 pi) (vget #2 pj))
        (let r2 (+ (* dx dx) (+ (* dy dy) (* dz dz)))
          (let r2i (/ 1.0f r2)
            (let r6i (* (* r2i r2i) r2i)
              (let s (if (< r2 cutsq) (* (* r2i r6i) (- (* lj1 r6i) lj2)) 0.0f)
                (tuple (* dx s) (* dy s) (* dz s))))))))))
(define (add3 a b) (tuple (+ (get #0 a) (get #0 b)) (+ (get #1 a) (get #1 b)) (+ (get #2 a) (get #2 b))))
(lift (N M) ((array-type (vector-type float 4) N) (array-type (array-type int M) N) float float float)
  (lambda (pos neigh cutsq lj1 lj2)
    (map (lambda (i)
           (let f (at 0 (reduce add3 (tuple 0.0f 0.0f 0.0f)
                          (map (lambda (j) (pair-force (at i pos) (at j pos) cutsq lj1 lj2)) (at i neigh))))
             (vec (get #0 f) (get #1 f) (get #2 f) 0.0f)))
         (generate N (lambda (i) i)))))
