;; Thesis program 6.1 (filter-gt-0.5-twice-lift.lisp): keep the elements above 0.5 with the
;; parallel filter (`filterGlb`: predicate, prefix sum and scatter kernels), then double them
;; with one work-item per kept element. The body of `unpack` is packed automatically.
;; (The thesis prints one closing parenthesis too many; this copy is balanced.)
;; data: thesis_6_1.json
;; expect: [1.5, 1.25, 1.75, 2.0, 1.125, 1.875]
(lift
 (N)
 ((array-type float N))
 (lambda (xs)
   (toGlobal
     (unpack ys (toGlobal (filterGlb (lambda (x)
       (> x 0.5f)) xs))
     (mapGlb (lambda (x) (* x 2.0f)) ys)))))
