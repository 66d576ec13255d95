;; dot: s = sum_i x_i y_i
;; size: N=16777216
;; form: zip ys xs (swapped), defined mult helper on a pair written y*x, commuted add lambda, at 0 bound with let and returned as a scalar
;; data: data/dot.json
;; expect: [36.203125]
(define (mult p) (* (get #1 p) (get #0 p)))
(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (let s (at 0 (reduce (lambda (a b) (+ b a)) 0.0f (map mult (zip ys xs))))
      s)))
