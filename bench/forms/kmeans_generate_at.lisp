;; k-means (Rodinia): member[p] = argmin_c sum_f (p_f - c_f)^2, first minimum wins
;; size: P=819200 F=34 C=5
;; form: explicit indices everywhere: generate P, C and F with at; the reduce state starts at index -1; the distance sum is a reduce of a generate
;; data: data/kmeans.json
;; expect: [1,1,4,0,2,1,4,2,0,2,2,4]
(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C))
  (lambda (points clusters)
    (map (lambda (p)
           (let best
             (at 0 (reduce (lambda (a b) (if (<= (get #0 a) (get #0 b)) a b))
                           (tuple 3.0e38f -1)
                           (map (lambda (c)
                                  (tuple (at 0 (reduce + 0.0f
                                                 (map (lambda (f) (let d (- (at f (at p points)) (at f (at c clusters))) (* d d)))
                                                      (generate F (lambda (f) f)))))
                                         c))
                                (generate C (lambda (c) c)))))
             (get #1 best)))
         (generate P (lambda (p) p)))))
