;; A private array is a work-item's registers or its own stack: one of 2048 floats is more than
;; the 1024 values allowed there (the same limit holds where sizes built into the kernels fix
;; a length); validation refuses it and points to local or global memory.
;; error: more than the 1024 a work-item may keep in private memory
(lift (N) ((array-type float N))
  (lambda (xs)
    (join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) (* x 2.0f)) c)))))
                  (split #2048 xs)))))
