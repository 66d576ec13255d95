;; A `generate` reads, with `at`, a private array its work-item has just computed (the first
;; two elements of its row, tripled), backwards: its C function takes the private array as an
;; argument.
;; data: filter_glb_tuple_rows.json
;; expect: [[7.0, 4.0], [13.0, 10.0], [19.0, 16.0], [25.0, 22.0], [31.0, 28.0]]
(lift
  (N M)
  ((array-type float N) (array-type (array-type float M) N))
  (lambda (ws rows)
    (toGlobal (mapGlb (lambda (r)
      (let t (toPrivate (mapSeq (lambda (x) (* x 3.0f)) (at 0 (split #2 r))))
        (toPrivate (mapSeq (lambda (g) g) (generate #2 (lambda (i) (let y (at (- 1 i) t) (+ y 1.0f))))))))
      rows))))
