;; A host `iterate` whose body splits a filter result by 4: the first step keeps 8 elements,
;; the second 7, so the run fails there, on the device as in the interpreter, naming the
;; `split`, the filter and the count of the step that failed (later steps would keep 6, then 5).
;; data: host_split_count.json
;; error-at: run
;; error: not a multiple of 4
(lift (N) ((array-type float N))
  (lambda (xs)
    (iterate #4
      (lambda (s)
        (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.0f)) s))
          (let sums (toGlobal (mapGlb (lambda (c) (reduceSeq + 0.0f c)) (split #4 ys)))
            (mapGlb (lambda (x) (- x (min 1.0f (abs (at 0 (join sums)))))) s))))
      xs)))
