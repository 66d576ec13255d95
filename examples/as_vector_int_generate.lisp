;; `asVector` of computed `int`s is an array of `int4`s: the vector type follows the element
;; type, which the `generate` below does not know (a `float4` here would store the ints' float
;; bits, 31 read back as 1106771968).
;; data: as_vector_int_generate.json
;; expect: [61, 63, 65, 67, 69, 71, 73, 75]
(lift
  (N)
  ((array-type int N))
  (lambda (xs)
    (asScalar
      (toGlobal
        (mapGlb (lambda (v) (+ (* v 2) 1))
                (asVector #4 (generate N (lambda (i) (+ i 30)))))))))
