;; difffuzz case 2026:22 (shrunk): driver
;; signature: build: use of undeclared identifier 'v_pt_#'
;; what goes wrong: a mapVec result used as an operand (here of dot): the kernel names an undeclared variable v_pt_N, the driver refuses it
;; OpenCL side: the OpenCL driver could not build the generated kernels
;; build log:
;; error: /root/.cache/pocl/kcache/tempfile_04TB03.cl:9:70: use of undeclared identifier 'v_pt_2'
;; error: /root/.cache/pocl/kcache/tempfile_04TB03.cl:10:111: use of undeclared identifier 'v_pt_2'
;; Device pthread-skylake-avx512-AMD EPYC failed to build the program
;; 
;; run `lift compile` on the program to see the generated source
;; data: mapvec_operand.json
(lift
  (N)
  ((array-type float N))
  (lambda (xs) (mapGlb (lambda (x3) (toGlobal (dot (vec x3 x3 x3 x3) (mapVec (lambda (l4) l4) (abs (vec x3 x3 x3 x3)))))) xs)))
