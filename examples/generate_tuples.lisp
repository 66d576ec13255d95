;; `generate` of tuples: the element's components are generated side by side, one view each
;; (element i is (i, 2.0, 3i), so the result is x + 6i = 1 + 7i).
;; data: generate_tuples.json
;; expect: [1.0, 8.0, 15.0, 22.0, 29.0, 36.0, 43.0, 50.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (t) (+ (get #0 t) (* (get #1 (get #1 t)) (to-float (get #2 (get #1 t))))))
      (zip xs (generate N (lambda (i) (tuple (to-float i) 2.0f (* i 3)))))))))
