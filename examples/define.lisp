;; Definitions: a constant, a scalar function, and a reusable pattern taking a function and a
;; size literal (`#4`) as arguments. They are inlined where used, so they cost nothing.
;; data: define.json
;; expect: [30.5, 1.5, 6.5]
(define offset 0.5f)
(define (sq x) (* x x))
(define (chunked-reduce f z k xs)
  (join (mapGlb (lambda (c) (toGlobal (reduceSeq f z c))) (split k xs))))

(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (chunked-reduce (lambda (acc x) (+ acc (sq x))) offset #4 xs)))
