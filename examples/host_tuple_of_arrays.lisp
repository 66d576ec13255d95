;; A tuple holding arrays as the value of a program with host sections: each array lives in a
;; buffer of its own between the host's steps, so the tuple is computed component by component.
;; A host `if` chooses between two pairs of arrays on a scalar parameter; a host `iterate`
;; doubles the first of the chosen pair, a kernel triples the second, and the value holds a
;; literal, both results and the chosen pair itself.
;; data: host_tuple_of_arrays.json
;; expect: [0.5, [8.0, 12.0, 16.0, 20.0], [1.5, 4.5, -6.0, 12.0], [2.0, [[2.0, 3.0, 4.0, 5.0], [0.5, 1.5, -2.0, 4.0]]]]
(lift
  (N)
  ((array-type float N) (array-type float N) float)
  (lambda (xs ys t)
    (let p (if (> t 1.0f)
             (tuple (mapGlb (lambda (x) (+ x 1.0f)) xs) ys)
             (tuple xs (mapGlb (lambda (y) (- 0.0f y)) ys)))
      (tuple 0.5f
             (iterate #2 (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) (get #0 p))
             (mapGlb (lambda (y) (* y 3.0f)) (get #1 p))
             (tuple t p)))))
