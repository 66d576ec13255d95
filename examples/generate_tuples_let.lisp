;; `generate` of tuples whose function binds with `let` and reads the scalar `s` from outside:
;; one C function of the index per component (element i is (s*i + 1, 2i), so the result is
;; x + (i/2 + 1) * 2i with s = 0.5).
;; data: generate_tuples_let.json
;; expect: [1.0, 5.0, 11.0, 19.0, 29.0, 41.0, 55.0, 71.0]
(lift
  (N)
  ((array-type float N) float)
  (lambda (xs s)
    (toGlobal (mapGlb (lambda (t) (+ (get #0 t) (* (get #0 (get #1 t)) (to-float (get #1 (get #1 t))))))
      (zip xs (generate N (lambda (i) (let y (* s (to-float i)) (tuple (+ y 1.0f) (* i 2))))))))))
