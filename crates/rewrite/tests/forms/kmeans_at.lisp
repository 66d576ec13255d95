;; K-means membership: the cluster index from `(zip clusters (generate C (lambda (i) i)))`, the
;; squared distance taken with `at 0`, the nearest found by a reduction over (distance, index).
;;   member[p] = argmin_c sum_f (points[p][f] - clusters[c][f])^2
(define (sqdist p c) (at 0 (reduce + 0.0f (map (lambda (q) (let d (- (get #0 q) (get #1 q)) (* d d))) (zip p c)))))
(define (nearer a b) (if (< (get #0 b) (get #0 a)) b a))

(lift
  (P F C)
  ((array-type (array-type float F) P) (array-type (array-type float F) C))
  (lambda (points clusters)
    (map (lambda (p)
           (get #1 (at 0 (reduce nearer (tuple 3.40282347e+38f 0)
                                 (map (lambda (ci) (tuple (sqdist p (get #0 ci)) (get #1 ci)))
                                      (zip clusters (generate C (lambda (i) i))))))))
         points)))
