;; MD: SHOC's molecular dynamics, the Lennard-Jones force on each particle summed over its
;; neighbour list (positions are float4, w unused), with a cutoff:
;;   d = p_i - p_j (xyz), r2 = d.d; if r2 < cutsq: f_i += d * r2i * r6i * (lj1 r6i - lj2),
;;   r2i = 1/r2, r6i = r2i^3.
;; Layout: the neighbour list of each particle is a row, [[int]M]N.
;; CGO'17 large size: N = 73,728 particles, M = 128 neighbours (--size N=73728 --size M=128).
;; data: md_rows.json
;; expect: [[0.00015614224, -0.00024409813, -0.00026205237, 0.0], [0.024317037, 0.023203634, 0.023822155, 0.0], [-0.00030451798, 0.00060903595, -0.00060903595, 0.0], [0.024142012, 0.03985696, -0.024142012, 0.0], [-0.024005488, -0.024005488, -0.024005488, 0.0], [-0.0007994, -0.00019985, 0.00059955, 0.0], [0.0007036448, 0.0002518974, 0.00015614224, 0.0], [-0.0028318402, 0.006658512, 0.0001407701, 0.0], [-0.023405937, -0.024205336, 0.024005488, 0.0], [0.024005488, -0.023865484, -0.023795482, 0.0]]
(define (xyz v) (vec (vget #0 v) (vget #1 v) (vget #2 v) 0.0f))
(define (lj-force pi pj cutsq lj1 lj2)
  (let d (xyz (- pi pj))
    (let r2 (dot d d)
      (if (< r2 cutsq)
          (let r2i (/ 1.0f r2)
            (let r6i (* (* r2i r2i) r2i)
              (* d (* (* r2i r6i) (- (* lj1 r6i) lj2)))))
          (vec 0.0f 0.0f 0.0f 0.0f)))))

(lift
  (N M)
  ((array-type (vector-type float 4) N) (array-type (array-type int M) N) float float float)
  (lambda (particles neighbours cutsq lj1 lj2)
    (join
      (map (lambda (pn)
             (reduce + (vec 0.0f 0.0f 0.0f 0.0f)
                     (map (lambda (j) (lj-force (get #0 pn) (at j particles) cutsq lj1 lj2)) (get #1 pn))))
           (zip particles neighbours)))))
