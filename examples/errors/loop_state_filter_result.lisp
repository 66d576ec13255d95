;; A loop of one work-item whose state is a filter result (an array of run-time length) is not
;; implemented yet: the state lives in one place of a size the types give.
;; error: inside a kernel over a state of type [float]X1 (an array of run-time length) is not supported yet
(lift (N K) ((array-type (array-type float 8) N))
  (lambda (rows)
    (mapGlb
      (lambda (r)
        (toGlobal
          (mapSeq (lambda (x) x)
            (iterate K (lambda (s) (filterSeq (lambda (x) (> x 0.0f)) s))
              (filterSeq (lambda (x) (> x 1.0f)) r)))))
      rows)))
