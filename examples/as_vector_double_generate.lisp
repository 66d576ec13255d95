;; `asVector` of computed `double`s is an array of `double2`s; the `generate` itself does not
;; know its element type, the vector view carries it.
;; data: as_vector_double_generate.json
;; expect: [0.5, 4.0, 7.5, 11.0, 14.5, 18.0]
(lift
  (N)
  ((array-type double N))
  (lambda (xs)
    (asScalar
      (toGlobal
        (mapGlb (lambda (p) (+ (get #0 p) (get #1 p)))
                (zip (asVector #2 xs) (asVector #2 (generate N (lambda (i) (to-double (* i 3)))))))))))
