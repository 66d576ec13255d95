;; Unrolled loops nested in unrolled loops multiply: 32 steps of 64 each hold the inner body
;; 2048 times, past the 1024 steps the generated code may unroll, although each loop alone is
;; within it; validation refuses the inner loop and names the product.
;; error: hold this loop's body 2048 times (32 × 64 steps
(lift (N) ((array-type float N))
  (lambda (xs)
    (join (toGlobal (mapGlb (lambda (r) (join (mapSeqUnroll (lambda (c) (mapSeqUnroll (lambda (x) (* x 2.0f)) c)) (split #64 r))))
                            (split #2048 xs))))))
