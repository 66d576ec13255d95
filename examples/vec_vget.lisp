;; Vector construction and components: `(vec a b)` builds a float2, `(vget #i v)` reads lane i,
;; `mapVec` applies a scalar function to every lane. A float2 prints as a JSON pair.
;; Each element x gives (x + 2x, x * x).
;; data: vec_vget.json
;; expect: [[9.0, 1.0], [36.0, 4.0], [2.25, 0.25], [81.0, 9.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb
        (lambda (x)
          (let v (vec x (* x 2.0f))
            (mapVec (lambda (l) (* l l))
                    (vec (+ (vget #0 v) (vget #1 v)) x))))
        xs))))
