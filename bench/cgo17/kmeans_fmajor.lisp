;; K-means: Rodinia's membership step, for each point the index of the nearest centre by
;; squared Euclidean distance over the features (the first minimum wins).
;;   member[p] = argmin_c sum_f (features[f][p] - centres[c][f])^2
;; Layout: features-major, [[float]P]F (Rodinia's and Lift's artifact layout: consecutive
;; points of one feature are adjacent, so neighbouring work-items read adjacent words).
;; CGO'17 large size: P = 819,200 points, F = 34 features, C = 5 centres
;; (--size P=819200 --size F=34 --size C=5).
;; data: kmeans_fmajor.json
;; expect: [0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 0]
(define (sqdist p c) (reduce + 0.0f (map (lambda (q) (let d (- (get #0 q) (get #1 q)) (* d d))) (zip p c))))
;; Associative (on (distance, index) pairs), and a tie keeps the left one, the lower index.
(define (nearer a b) (if (< (get #0 b) (get #0 a)) b a))

(lift
  (P F C)
  ((array-type (array-type float P) F) (array-type (array-type float F) C))
  (lambda (features centres)
    (join
      (map (lambda (p)
             (map (lambda (best) (get #1 best))
                  (reduce nearer (tuple 3.40282347e+38f 0)
                          (join (map (lambda (ci) (map (lambda (d) (tuple d (get #1 ci))) (sqdist p (get #0 ci))))
                                     (zip centres (generate C (lambda (i) i))))))))
           (transpose features)))))
