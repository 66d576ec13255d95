;; A loop of a run-time count in one work-item ("Loops inside a work-item") is not implemented
;; yet: inside a kernel the count of `iterate` must be a literal.
;; error: `iterate` with a size-variable count inside a kernel is not supported yet
(lift (N K) ((array-type (array-type float 4) N))
  (lambda (rows)
    (join (mapGlb (lambda (r) (toGlobal (iterate K (lambda (s) (mapSeq (lambda (x) (* x 0.5f)) s)) r))) rows))))
