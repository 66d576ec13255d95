;; Integer arithmetic with C semantics: `/` truncates toward zero and `%` takes the sign of the
;; dividend. Each pair (a, b) gives (a+b, a-b, a*b, a/b, a%b).
;; data: int_arith.json
;; expect: [[9, 5, 14, 3, 1], [-5, -9, -14, -3, -1], [5, 9, -14, -3, 1], [-9, -5, 14, 3, -1], [107, 93, 700, 14, 2], [5, -5, 0, 0, 0], [2148483, 2146483, 2147483000, 2147, 483]]
(lift
  (N)
  ((array-type int N) (array-type int N))
  (lambda (as bs)
    (toGlobal
      (mapGlb
        (lambda (p)
          (let a (get #0 p)
            (let b (get #1 p)
              (tuple (+ a b) (- a b) (* a b) (/ a b) (% a b)))))
        (zip as bs)))))
