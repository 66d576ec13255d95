;; difffuzz case 1:219 (shrunk): driver
;; signature: build: use of undeclared identifier 'M'
;; what goes wrong: split by a size variable (split M): the kernel uses the name M, which it never declares (the size parameter is v_M)
;; OpenCL side: the OpenCL driver could not build the generated kernels
;; build log:
;; error: /root/.cache/pocl/kcache/tempfile_TOZUNO.cl:8:35: use of undeclared identifier 'M'
;; error: /root/.cache/pocl/kcache/tempfile_TOZUNO.cl:8:51: use of undeclared identifier 'M'
;; Device pthread-skylake-avx512-AMD EPYC failed to build the program
;; 
;; run `lift compile` on the program to see the generated source
;; data: split_by_size_variable.json
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (split M xs)))
