;; Built-ins of a vector and a scalar: OpenCL C has `min(int4, int)` but not `min(int, int4)`,
;; and neither `pow(float4, float)` nor `fmod(float4, float)`, so the scalar operand is made a
;; vector (`(int4)(3)`) and every call has exactly one overload. `abs` of ints gives unsigned
;; ints in OpenCL C, converted back bit for bit.
;; data: vector_scalar_builtins.json
;; expect: [[[1, 3, 2, 3], [3, 5, 3, 8], [7, 3, 6, 0], [8.0, 27.0], [1.0, 0.0]], [[-2, 3, 3, 1], [3, 3, 7, 3], [3, 2, 6, 0], [15.625, 0.125], [0.5, 0.0]]]
(lift
  (N)
  ((array-type int N) (array-type (vector-type float 2) (/ N 4)))
  (lambda (xs ys)
    (toGlobal
      (mapGlb (lambda (p)
                (let v (get #0 p)
                  (let f (get #1 p)
                    (tuple (min 3 v) (max v 3) (abs (- v (vget #3 v))) (pow f 3.0f) (% 3.0f f)))))
              (zip (asVector #4 xs) ys)))))
