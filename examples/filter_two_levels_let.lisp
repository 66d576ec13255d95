;; Rows of rows of filter results as the result below `let`s (the inlined `define` binds its
;; arguments): `mapWrg` of `mapLcl` of a `filterSeq` bound by `let` and mapped, each row of each
;; pair keeping its positive elements plus one, returned with a length per row of each pair.
;; data: filter_two_levels.json
;; expect: [[[2.0, 4.0], []], [[8.0, 10.0], [1.5]]]
(define (pairs k xs) (split k xs))
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs)
    (mapWrg (lambda (g)
      (toGlobal (mapLcl (lambda (r)
        (toGlobal (let ys (filterSeq (lambda (x) (> x 0.0f)) r)
          (toGlobal (mapSeq (lambda (y) (+ y 1.0f)) ys)))))
        g)))
      (pairs #2 xs))))
