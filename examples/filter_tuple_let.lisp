;; A `let`-bound tuple holding a filter result, taken apart: the compiler binds each component
;; on its own, so the filter result has the binder that bounds its length (the positive
;; elements, each plus the first element tripled).
;; data: filter_tuple_let.json
;; expect: [4.0, 6.0, 8.0]
(lift (N) ((array-type float N))
  (lambda (xs)
    (let p (tuple (filterGlb (lambda (x) (> x 0.0f)) xs) (mapGlb (lambda (x) (* x 3.0f)) xs))
      (mapGlb (lambda (x) (+ x (at 0 (get #1 p)))) (get #0 p)))))
