;; mm: C = A B (A row-major M x K, B row-major K x N)
;; size: M=4096 K=4096 N=4096
;; form: explicit indices: generate M, generate N, generate K, element products (at k (at i A)) (at j (at k B))
;; data: data/mm.json
;; expect: [[-6.109375,4.203125,1.875,-4.796875,3.0,7.9375],[-9.46875,8.71875,0.90625,1.375,4.234375,-4.53125],[6.984375,2.796875,-0.75,-13.328125,3.21875,3.25],[-2.0625,0.5625,3.484375,1.046875,4.578125,1.65625]]
(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (A B)
    (map (lambda (i)
           (map (lambda (j)
                  (at 0 (reduce + 0.0f (map (lambda (k) (* (at k (at i A)) (at j (at k B)))) (generate K (lambda (k) k))))))
                (generate N (lambda (j) j))))
         (generate M (lambda (i) i)))))
