;; difffuzz case 2026:29 (shrunk): driver
;; signature: build: unknown type name 'Tuple_int_float'
;; what goes wrong: a nested tuple result: the struct of the inner tuple is used before it is defined (or never defined), the driver refuses the kernel
;; OpenCL side: the OpenCL driver could not build the generated kernels
;; build log:
;; error: /root/.cache/pocl/kcache/tempfile_0iZMVo.cl:3:3: unknown type name 'Tuple_int_float'
;; Device pthread-skylake-avx512-AMD EPYC failed to build the program
;; 
;; run `lift compile` on the program to see the generated source
;; data: nested_tuple_result.json
(define def2 -1.0f)
(lift
  ()
  ()
  (lambda () (tuple def2 (tuple 0 -0.5f))))
