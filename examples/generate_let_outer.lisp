;; `generate` with `let` whose function also reads values from outside: the element `x` of the
;; enclosing mapGlb and the scalar parameter `alpha`. Each work-item sums (i + alpha) * x for
;; i = 0, 1, 2, that is (3 + 3 alpha) x. The function becomes a C function of the index that
;; takes `x` and `alpha` as arguments.
;; data: generate_let_outer.json
;; expect: [4.5, 9.0, -4.5, 18.0]
(lift
  (N)
  ((array-type float N) float)
  (lambda (xs alpha)
    (join
      (mapGlb
        (lambda (x)
          (toGlobal
            (reduceSeq + 0.0f
              (generate #3
                (lambda (i)
                  (let w (+ (to-float i) alpha)
                    (* w x)))))))
        xs))))
