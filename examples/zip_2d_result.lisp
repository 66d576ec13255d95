;; A result that is a zip with a 2-D array: an array of tuples holding arrays, stored as one
;; buffer per tuple component (struct of arrays) and zipped back by the host.
;; data: zip_2d_result.json
;; expect: [[0.0, [1.0, 2.0]], [0.0, [3.0, 4.0]], [0.0, [5.0, 6.0]]]
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (zip (generate N (lambda (i1) 0.0f)) xs)))
