;; `scanGlb` orders the work-groups of its own kernel, so it cannot run inside another kernel's
;; map (a map of `scanGlb` over rows at the top level is one launch; inside `mapGlb` it is not).
;; error: `scanGlb` orders the work-groups of its own kernel
(lift (N M) ((array-type (array-type float M) N))
  (lambda (xss) (mapGlb (lambda (r) (mapSeq (lambda (x) (* 2.0f x)) (scanGlb + 0.0f r))) xss)))
