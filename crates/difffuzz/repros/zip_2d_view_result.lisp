;; difffuzz case 2026:48 (shrunk): internal
;; signature: internal: a buffer was read with too few indices
;; what goes wrong: a host-level result that is only a view (zip of a 2-D array, no kernel): internal error 'a buffer was read with too few indices'
;; OpenCL side: internal: a buffer was read with too few indices
;; data: zip_2d_view_result.json
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (zip (generate N (lambda (i1) 0.0f)) xs)))
