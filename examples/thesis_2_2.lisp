;; Thesis program 2.2: split the vector into pairs, double each pair sequentially, join.
;; An `o` pipeline (the last element is the argument), a partial application `(split #2)`,
;; and nested `mapSeq`s, all in one work-item. N must be even (checked when N is known).
;; data: thesis_2_2.json
;; expect: [1.0, 3.0, 4.0, 5.0, -2.0, 6.5]
(lift
 (N)
 ((array-type float N))
 (lambda (xs)
   (o
    join
    (mapSeq (lambda (ys)
             (mapSeq (lambda (y) (* y 2.0f)) ys)))
    (split #2)
    xs)))
