;; A filter of float4 windows inside a map: each work-item keeps the vectors of its window in a
;; private array of their scalars, which must hold 4 floats per vector. Found by the differential
;; fuzzer on the H200 (seed 13, case 2413): the array was declared with one float per vector,
;; the vstore4s wrote past it, and NVIDIA's results differed from the interpreter's (PoCL's
;; happened not to).
;; data: filter_seq_vectors.json
;; expect: [[1.5, 0.5, -3.5], [0.5, -3.5, -0.5]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (map (lambda (w) (map (lambda (v) (+ (vget #2 v) (vget #3 v)))
                          (filter (lambda (v) (> (vget #0 v) -10.0f)) w)))
         (slide #3 #1 (asVector #4 xs)))))
