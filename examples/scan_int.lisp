;; An inclusive prefix sum of ints with the map before it read inline and the map after it applied
;; as the scan stores: `scan f z (map g xs)` and `map h (scan …)` are one launch.
;; data: scan_int.json
;; expect: [-34, -46, -43, -25, -49, -58, -52, -31, -52, -58, -49, -25, -43, -46, -34, -7, -22, -22, -7, -34, -46, -43, -25, -49, -58, -52, -31, -52, -58, -49, -25, -43, -46, -34, -7, -22, -22]
(lift
  (N)
  ((array-type int N))
  (lambda (xs)
    (map (lambda (s) (- s 7))
         (scan (lambda (a b) (+ a b)) 0 (map (lambda (x) (* 3 x)) xs)))))
