;; A work-group tree reduction (as in wg_reduce.lisp) whose values are (float4, float) tuples:
;; the sum of the vectors and the largest second lane, halved twice in local memory.
;; data: wg_reduce_tuple_vector.json
;; expect: [[[15.0, 19.0, 21.0, 25.0], 10.0], [[10.0, 2.0, 10.0, 10.0], 3.0]]
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal
            (mapLcl (lambda (x) x)
              (iterate #2
                (lambda (a)
                  (join (mapLcl (lambda (pair)
                                  (toLocal (reduceSeq (lambda (acc p) (tuple (+ (get #0 acc) (get #0 p)) (max (get #1 acc) (get #1 p))))
                                                      (tuple (vec 0.0f 0.0f 0.0f 0.0f) -100.0f)
                                                      pair)))
                                (split #2 a))))
                (toLocal (mapLcl (lambda (x) (tuple x (vget #1 x))) chunk))))))
        (split #4 xs)))))
