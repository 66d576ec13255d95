;; `x / (|x| + 1)` (a soft sign, negated) over each padded window of three: every padded element
;; is read once into a private variable. Substituted at its two uses, the padded read is the same
;; conditional load twice in one expression; PoCL's LLVM (x86, AVX-512) vectorizes those as
;; masked loads and aborts selecting instructions for `fabs` of one ("Cannot select: v4f32 =
;; and masked_load"), killing the process. Found by the differential fuzzer (case 62:64).
;; data: pad_fabs_neg.json
;; expect: [[-0.5,0.5,-0.5,-0.6666667,-0.5],[-0.5,-0.5,-0.6666667,0.6666667,-0.5],[-0.5,-0.6666667,0.6666667,-0.75,-0.5],[-0.5,0.6666667,-0.75,-0.0,-0.5]]
(lift (N) ((array-type float N))
  (lambda (xs)
    (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (x) (/ (- x) (+ (abs x) 1.0f))) (pad #1 #1 1.0f w))))
      (slide #3 #1 xs))))
