;; `x / (|x| + 1)` negated, where the program reads each padded element twice with `at`: each read
;; is held in a private variable. Written inline, the two reads are one conditional load twice in
;; one expression, which PoCL's LLVM (x86, AVX-512) turns into masked loads and then aborts on
;; ("Cannot select: v4f32 = and masked_load"), as in pad_fabs_neg.lisp.
;; data: pad_fabs_neg.json
;; expect: [[-0.5,0.5,-0.5,-0.6666667,-0.5],[-0.5,-0.5,-0.6666667,0.6666667,-0.5],[-0.5,-0.6666667,0.6666667,-0.75,-0.5],[-0.5,0.6666667,-0.75,-0.0,-0.5]]
(lift (N) ((array-type float N))
  (lambda (xs)
    (mapGlb
      (lambda (w)
        (toGlobal
          (mapSeq
            (lambda (i) (/ (- (at i (pad #1 #1 1.0f w))) (+ (abs (at i (pad #1 #1 1.0f w))) 1.0f)))
            (generate #5 (lambda (j) j)))))
      (slide #3 #1 xs))))
