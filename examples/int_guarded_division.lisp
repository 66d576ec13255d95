;; A division guarded by `if`: both branches of a scalar `if` are computed on the device, so
;; the division by a zero divisor must not be reported when its branch is not the one taken
;; (the interpreter computes only the taken branch). Unsigned and long quotients and
;; remainders, 0 where the divisor is 0. Expected values: scripts/int_examples.py.
;; data: int_guarded_division.json
;; expect: [[3, 1, -3, -1], [0, 0, 0, 0], [4294967295, 0, 4611686018427387904, 0], [1, 6, 1, -6]]
(lift
  (N)
  ((array-type uint N) (array-type uint N) (array-type long N) (array-type long N))
  (lambda (us vs ls ms)
    (toGlobal
      (mapGlb
        (lambda (p)
          (let u (get #0 p)
            (let v (get #1 p)
              (let l (get #2 p)
                (let m (get #3 p)
                  (tuple
                    (if (= v 0u) 0u (/ u v))
                    (if (= v 0u) 0u (% u v))
                    (if (= m 0l) 0l (/ l m))
                    (if (= m 0l) 0l (% l m))))))))
        (zip us vs ls ms)))))
