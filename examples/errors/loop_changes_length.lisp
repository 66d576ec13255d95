;; `iterate K` inside a kernel (K known at run time) is one loop whose state stays in one
;; place, so its function must keep the state's length; padding it each step does not.
;; error: the function of `iterate` inside a kernel must keep the state's type
(lift (N K) ((array-type (array-type float 4) N))
  (lambda (rows)
    (mapGlb
      (lambda (r)
        (toGlobal (iterate K (lambda (s) (mapSeq (lambda (x) (* x 0.5f)) (pad-clamp #1 #1 s))) r)))
      rows)))
