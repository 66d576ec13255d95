;; mm: C = A B (A row-major M x K, B row-major K x N)
;; size: M=4096 K=4096 N=4096
;; form: the K sum as partial sums of chunks of 4 (split #4 of the zip of the A row and the B column), then the sum of the partials; columns of B by transpose bound with let
;; data: data/mm.json
;; expect: [[-6.109375,4.203125,1.875,-4.796875,3.0,7.9375],[-9.46875,8.71875,0.90625,1.375,4.234375,-4.53125],[6.984375,2.796875,-0.75,-13.328125,3.21875,3.25],[-2.0625,0.5625,3.484375,1.046875,4.578125,1.65625]]
(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (A B)
    (let bt (transpose B)
      (map (lambda (arow)
             (map (lambda (bcol)
                    (at 0 (reduce + 0.0f
                            (join (map (lambda (c) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) c)))
                                       (split #4 (zip arow bcol)))))))
                  bt))
           A))))
