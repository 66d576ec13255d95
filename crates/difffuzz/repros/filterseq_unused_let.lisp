;; difffuzz case 1:14 (shrunk): driver
;; signature: build: use of undeclared identifier 'v_pt_#'
;; what goes wrong: a filterSeq bound by let inside mapGlb and not used: the kernel reads an undeclared variable
;; OpenCL side: the OpenCL driver could not build the generated kernels
;; build log:
;; error: /root/.cache/pocl/kcache/tempfile_KeKaqP.cl:12:57: use of undeclared identifier 'v_pt_2'
;; Device pthread-skylake-avx512-AMD EPYC failed to build the program
;; 
;; run `lift compile` on the program to see the generated source
;; data: filterseq_unused_let.json
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (xs) (mapGlb (lambda (x1) (let ys3 (filterSeq (lambda (x2) true) x1) 0.0f)) (slide #4 #2 xs))))
