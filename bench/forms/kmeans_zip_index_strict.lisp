;; k-means (Rodinia): member[p] = argmin_c sum_f (p_f - c_f)^2, first minimum wins
;; size: P=819200 F=34 C=5
;; form: per point, reduce over zip (distance, index) where the index comes from generate C; keep the left pair unless the right is strictly smaller; map get #1 of the one-element result and join
;; data: data/kmeans.json
;; expect: [1,1,4,0,2,1,4,2,0,2,2,4]
(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C))
  (lambda (points clusters)
    (join
      (map (lambda (pt)
             (map (lambda (best) (get #1 best))
                  (reduce (lambda (a b) (if (< (get #0 b) (get #0 a)) b a))
                          (tuple 3.0e38f 0)
                          (zip (map (lambda (c)
                                      (at 0 (reduce + 0.0f (map (lambda (pc) (* (- (get #0 pc) (get #1 pc)) (- (get #0 pc) (get #1 pc))))
                                                                (zip pt c)))))
                                    clusters)
                               (generate C (lambda (i) i))))))
           points))))
