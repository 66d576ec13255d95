;; difffuzz case 2026:104 (shrunk): driver
;; signature: build: expression is not assignable
;; what goes wrong: unary minus of a negative literal is printed --2.0f, which OpenCL C reads as a decrement
;; OpenCL side: the OpenCL driver could not build the generated kernels
;; build log:
;; error: /root/.cache/pocl/kcache/tempfile_DcDN2c.cl:2:18: expression is not assignable
;; Device pthread-skylake-avx512-AMD EPYC failed to build the program
;; 
;; run `lift compile` on the program to see the generated source
;; data: negate_negative_literal.json
(lift
  ()
  ()
  (lambda () (- -2.0f)))
