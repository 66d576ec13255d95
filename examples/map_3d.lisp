;; `mapGlb2`/`mapGlb1`/`mapGlb`: a 3-D NDRange over a 3-D array, one work-item per element.
;; data: map_3d.json
;; expect: [[[1.0, 2.0, 3.0], [11.0, 12.0, 13.0]], [[101.0, 102.0, 103.0], [111.0, 112.0, 113.0]]]
(lift
  (A B C)
  ((array-type (array-type (array-type float C) B) A))
  (lambda (t)
    (mapGlb2
      (lambda (plane)
        (mapGlb1 (lambda (row) (toGlobal (mapGlb (lambda (x) (+ x 1.0f)) row)))
                 plane))
      t)))
