;; A filter result zipped with a map of itself: both have the same run-time length X, so the
;; `zip` type-checks (zipping two DIFFERENT filter results would not).
;; Keeps the odd ints and pairs each with ten times itself.
;; data: filter_zip_map.json
;; expect: [[3, 30], [-5, -50], [7, 70], [11, 110], [1, 10]]
(lift
  (N)
  ((array-type int N))
  (lambda (xs)
    (let ys (toGlobal (filterSeq (lambda (x) (!= (% x 2) 0)) xs))
      (zip ys (toGlobal (mapSeq (lambda (y) (* y 10)) ys))))))
