;; k-means (Rodinia): member[p] = argmin_c sum_f (p_f - c_f)^2, first minimum wins
;; size: P=819200 F=34 C=5
;; form: defined dist2 (at 0 of a reduce) and a commutative argmin on (index, distance) tuples with the lower index breaking ties; zip index first; at 0 then get
;; data: data/kmeans.json
;; expect: [1,1,4,0,2,1,4,2,0,2,2,4]
(define (dist2 u v)
  (at 0 (reduce + 0.0f (map (lambda (uv) (let d (- (get #1 uv) (get #0 uv)) (* d d))) (zip v u)))))
(define (argmin2 a b)
  (if (or (< (get #1 a) (get #1 b)) (and (= (get #1 a) (get #1 b)) (< (get #0 a) (get #0 b)))) a b))
(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C))
  (lambda (points clusters)
    (map (lambda (pt)
           (get #0 (at 0 (reduce argmin2 (tuple 0 3.0e38f)
                           (zip (generate C (lambda (i) i))
                                (map (lambda (c) (dist2 pt c)) clusters))))))
         points)))
