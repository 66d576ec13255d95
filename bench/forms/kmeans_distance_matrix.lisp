;; k-means (Rodinia): member[p] = argmin_c sum_f (p_f - c_f)^2, first minimum wins
;; size: P=819200 F=34 C=5
;; form: first the whole P x C distance matrix (bound with let, distances with pow 2), then a second map taking the argmin of each row with a min-then-index reduce
;; data: data/kmeans.json
;; expect: [1,1,4,0,2,1,4,2,0,2,2,4]
(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C))
  (lambda (points clusters)
    (let dists (map (lambda (pt)
                      (map (lambda (c) (at 0 (reduce + 0.0f (map (lambda (x) (pow (- (get #0 x) (get #1 x)) 2.0f)) (zip pt c)))))
                           clusters))
                    points)
      (map (lambda (row)
             (let m (at 0 (reduce min 3.0e38f row))
               (at 0 (reduce min 1000000
                       (map (lambda (di) (if (= (get #0 di) m) (get #1 di) 1000000))
                            (zip row (generate C (lambda (i) i))))))))
           dists))))
