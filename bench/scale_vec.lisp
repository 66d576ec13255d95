;; Vector scaling with float4 loads and stores: a variant of bench/scale.lisp.
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (asScalar (toGlobal (mapGlb (lambda (v) (* v 2.0f)) (asVector #4 xs))))))
