;; `filterSeq` per element of a `mapGlb` nested in `mapGlb2`: the result holds filter results two
;; array levels deep, whose lengths the OpenCL back end cannot return yet (a clean refusal; it
;; was an internal "filter without a length destination").
;; error: arrays of arrays of filter results
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (mapGlb2 (lambda (rows) (mapGlb (lambda (r) (filterSeq (lambda (x) (> x 0.0f)) r)) rows)) (split #2 xs))))
