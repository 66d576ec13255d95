;; mm: C = A B (A row-major M x K, B row-major K x N)
;; size: M=4096 K=4096 N=4096
;; form: each row of C as a sum of the rows of B scaled by the row of A (zip arow B, reduce with an element-wise vector add), no transpose
;; data: data/mm.json
;; expect: [[-6.109375,4.203125,1.875,-4.796875,3.0,7.9375],[-9.46875,8.71875,0.90625,1.375,4.234375,-4.53125],[6.984375,2.796875,-0.75,-13.328125,3.21875,3.25],[-2.0625,0.5625,3.484375,1.046875,4.578125,1.65625]]
(define (vadd u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))
(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (A B)
    (join (map (lambda (arow)
                 (reduce vadd (map (lambda (b) 0.0f) (at 0 B))
                   (map (lambda (ab) (map (lambda (b) (* (get #0 ab) b)) (get #1 ab))) (zip arow B))))
               A))))
