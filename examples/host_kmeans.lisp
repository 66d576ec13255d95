;; Host-level `iterate-until`: k-means on 2-D points. A step assigns every point to its
;; nearest centre (one kernel) and recomputes each centre as the mean of its points (a second
;; kernel); the loop stops when no point changes its centre, at most 100 steps.
;; data: host_kmeans.json
;; expect: [[-0.53275001, -0.39862502], [3.093375, 0.87075007], [0.88575006, 3.9189999]]
(define (nearest p ics)
  (get #1
    (at 0
      (reduceSeq
        (lambda (best ci)
          (let dx (- (get #0 p) (get #0 (get #0 ci)))
            (let dy (- (get #1 p) (get #1 (get #0 ci)))
              (let d (+ (* dx dx) (* dy dy))
                (if (< d (get #0 best)) (tuple d (get #1 ci)) best)))))
        (tuple 3.0e38f -1)
        ics))))
(lift
  (N C)
  ((array-type (tuple-type float float) N) (array-type (tuple-type float float) C))
  (lambda (points centres)
    (iterate-until #100
      (lambda (prev next)
        (join
          (mapGlb
            (lambda (all)
              (reduceSeq
                (lambda (same p) (and same (= (nearest p (zip prev (generate C (lambda (i) i)))) (nearest p (zip next (generate C (lambda (i) i)))))))
                true all))
            (split N points))))
      (lambda (cs)
        (let assign (mapGlb (lambda (p) (nearest p (zip cs (generate C (lambda (i) i))))) points)
          (mapGlb
            (lambda (ci)
              (at 0
                (mapSeq
                  (lambda (acc)
                    (if (> (get #2 acc) 0.0f)
                      (tuple (/ (get #0 acc) (get #2 acc)) (/ (get #1 acc) (get #2 acc)))
                      (get #0 ci)))
                  (reduceSeq
                    (lambda (acc pa)
                      (if (= (get #1 pa) (get #1 ci))
                        (tuple (+ (get #0 acc) (get #0 (get #0 pa))) (+ (get #1 acc) (get #1 (get #0 pa))) (+ (get #2 acc) 1.0f))
                        acc))
                    (tuple 0.0f 0.0f 0.0f)
                    (zip points assign)))))
            (zip cs (generate C (lambda (i) i))))))
      centres)))
