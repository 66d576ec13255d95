;; The vector half of a zip of a vector with a matrix's rows, read per chunk beside a generated
;; index. Found by the differential fuzzer (seed 11, case 535): the OpenCL back end failed with
;; "internal: a buffer was read with too few indices" before zips and tuples holding rows were
;; given one view per component.
;; data: zip_rows_get.json
;; expect: [[2.0, 3.0]]
(lift
  (M N)
  ((array-type (array-type float M) N) (array-type float N))
  (lambda (xs ys)
    (mapGlb
      (lambda (chunk)
        (toGlobal
          (mapSeq (lambda (ip) (max 0.0f (get #0 (get #1 ip))))
                  (zip (generate #2 (lambda (i) i)) chunk))))
      (split #2 (zip ys xs)))))
