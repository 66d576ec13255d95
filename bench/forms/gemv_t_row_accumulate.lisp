;; gemv T: y = alpha A^T x + beta y (A row-major M x N, x of length M, y of length N)
;; size: M=8192 N=8192
;; form: A^T x as a sum of scaled rows: zip A x, scale each row by x_i, reduce with an element-wise vector add (a reduce over arrays); then axpby with y
;; data: data/gemv_t.json
;; expect: [-6.921875,-2.859375,0.6640625,1.34375,-6.75,-1.8515625,2.0625,-1.515625]
(define (vadd u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))
(lift (M N) ((array-type (array-type float N) M) (array-type float M) (array-type float N) float float)
  (lambda (A x y alpha beta)
    (let atx (at 0 (reduce vadd (map (lambda (v) 0.0f) y)
                     (map (lambda (rx) (map (lambda (a) (* a (get #1 rx))) (get #0 rx))) (zip A x))))
      (map (lambda (p) (+ (* alpha (get #0 p)) (* beta (get #1 p)))) (zip atx y)))))
