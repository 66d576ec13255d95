;; The classic LIFT work-group tree reduction: each work-group stages its chunk of 16 in local
;; memory, then `iterate #4` halves it four times (16 -> 8 -> 4 -> 2 -> 1), each step summing
;; pairs in local memory; the one remaining value is copied to global memory.
;; Result: one partial sum per chunk of 16.
;; data: wg_reduce.json
;; expect: [1.0, 0.0, -1.0, -2.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal
            (mapLcl (lambda (x) x)
              (iterate #4
                (lambda (a)
                  (join (mapLcl (lambda (pair) (toLocal (reduceSeq + 0.0f pair)))
                                (split #2 a))))
                (toLocal (mapLcl (lambda (x) x) chunk))))))
        (split #16 xs)))))
