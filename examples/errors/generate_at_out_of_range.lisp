;; A `generate` reads the input past its end with `at` (xs[6 + i] for i up to 3 of 8 elements):
;; the interpreter names the index; on OpenCL the C function of the `generate` raises the
;; bounds check's flag, which the host reports after the kernel.
;; data: ../generate_tuples.json
;; error-at: run
;; error: out of range
(lift (N) ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f
      (generate #4 (lambda (i) (* x (at (+ i 6) xs)))))))
      xs))))
