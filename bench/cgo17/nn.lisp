;; NN: Rodinia nearest neighbour, the distance from one query location to every record.
;;   dist[i] = sqrt((lat - locs[i].0)^2 + (lng - locs[i].1)^2)
;; CGO'17 large size: N = 33,554,432 locations (--size N=33554432).
;; data: nn.json
;; expect: [4.2426405, 0.0, 2.5, 10.0, 1.0, 3.6055512, 0.75, 6.708204]
(define (sq x) (* x x))

(lift
  (N)
  ((array-type (tuple-type float float) N) float float)
  (lambda (locs lat lng)
    (map (lambda (l) (sqrt (+ (sq (- lat (get #0 l))) (sq (- lng (get #1 l)))))) locs)))
