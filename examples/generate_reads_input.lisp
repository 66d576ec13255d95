;; A `generate` whose function binds with `let` and reads an input with `at`: its C function
;; takes the input buffer, the size and the bounds check's error flag as arguments (element i is
;; 2 * ys[7 - i], so the result is x + 2 * (8 - i) for x = i + 1).
;; data: pad_tuples.json
;; expect: [17.0, 16.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0]
(lift
  (N)
  ((array-type float N) (array-type int N))
  (lambda (xs ys)
    (toGlobal (mapGlb (lambda (t) (+ (get #0 t) (get #1 t)))
      (zip xs (generate N (lambda (i) (let j (- 7 i) (* 2.0f (to-float (at j ys)))))))))))
