;; Split/join: one work-item per chunk of 4, each chunk processed sequentially.
;; `join (split #4 xs)` indexes as `i` again (no `(i/4)*4 + i%4` in the kernel).
;; data: split_join.json
;; expect: [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapGlb (lambda (chunk) (toGlobal (mapSeq (lambda (x) (+ x 1.0f)) chunk)))
              (split #4 xs)))))
