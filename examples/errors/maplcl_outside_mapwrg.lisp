;; `mapLcl` distributes work among the work-items of one work-group, so it needs the `mapWrg`
;; of its dimension around it; validation refuses it before any code is generated.
;; error: `mapLcl` must be inside `mapWrg`
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapLcl (lambda (x) (* x 2.0f)) xs))))
