;; The built-in math functions `sqrt exp log sin cos pow fma` (OpenCL semantics: results
;; agree with the interpreter within 1e-4, not bit for bit).
;; data: math_functions.json
;; expect: [[0.5, 1.284025, -1.386294, 0.247404, 0.9689124, 0.125, 1.0625], [0.7071068, 1.648721, -0.6931472, 0.4794255, 0.8775826, 0.3535534, 1.25], [1.0, 2.718282, 0.0, 0.841471, 0.5403023, 1.0, 2.0], [1.414214, 7.389056, 0.6931472, 0.9092974, -0.4161468, 2.828427, 5.0], [1.732051, 20.08554, 1.098612, 0.14112, -0.9899925, 5.196152, 10.0]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb
        (lambda (x)
          (tuple (sqrt x) (exp x) (log x) (sin x) (cos x) (pow x 1.5f) (fma x x 1.0f)))
        xs))))
