;; difffuzz case 62:64 (shrunk by hand): crash
;; signature: process died: In function: _pocl_kernel_KERNEL_#
;; what goes wrong: PoCL's LLVM (x86 instruction selection) aborts the process while building a
;; valid kernel: "LLVM ERROR: Cannot select: v4f32 = and (masked_load ...), <0x7fffffff>" for
;; `-x / (fabs(x) + 1.0f)` over a padded window, once the loop is vectorized with masked loads.
;; The OpenCL C we generate is valid (small variations build and agree); a driver defect, but it
;; killed `lift run` with exit 134. Fixed: a padded element read more than once is read once into
;; a private variable (`gen/scalar.rs` `loop_elem`); `examples/pad_fabs_neg.lisp` runs it on PoCL.
;; data: pocl_llvm_fabs_masked_load.json
(lift (N) ((array-type float N))
  (lambda (xs)
    (mapGlb (lambda (x1) (toGlobal (mapSeq (lambda (x2) (/ (- x2) (+ (abs x2) 1.0f))) (pad #1 #1 1.0f x1))))
      (slide #3 #1 xs))))
