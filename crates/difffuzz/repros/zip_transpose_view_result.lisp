;; difffuzz case 1:106 (shrunk): internal
;; signature: internal: a view was read with too few indices
;; what goes wrong: a host-level result that is only a view (zip of a transposed 2-D array with generate): internal error 'a view was read with too few indices'
;; OpenCL side: internal: a view was read with too few indices
;; data: zip_transpose_view_result.json
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (zip (transpose xs) (generate M (lambda (i1) i1)))))
