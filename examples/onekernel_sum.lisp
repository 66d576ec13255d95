;; A whole-array sum in one launch (issue 11.1), as the rewriter lowers `reduce + 0.0f xs`
;; (`grid-reduce-*`, here with 4 work-groups of 8 work-items instead of ~1000 of 256): xs is
;; padded with the neutral 0.0f up to a multiple of the 32 work-items, work-item l of group w
;; sums xs[8w + l], xs[8w + l + 32], … (each step of the grid reads 32 consecutive elements),
;; each group combines its 8 sums by a tree in local memory, and the group that finishes last
;; sums the 4 groups' results: the code generator runs the second `mapWrg` (one group) inside
;; the first kernel, in the group that draws the last ticket.
;; data: onekernel_sum.json
;; expect: [61.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let parts
      (join
        (mapWrg
          (lambda (grp)
            (toGlobal
              (mapLcl
                (lambda (x) x)
                (iterate #3
                  (lambda (a)
                    (join
                      (mapLcl
                        (lambda (pair) (toLocal (reduceSeqUnroll (lambda (p q) (+ p q)) 0.0f pair)))
                        (split #2 a))))
                  (join
                    (mapLcl
                      (lambda (row) (toLocal (reduceSeq (lambda (acc y) (+ acc y)) 0.0f row)))
                      grp))))))
          (split #8 (transpose (split #32 (pad #0 (- 31 (% (+ N 31) 32)) 0.0f xs))))))
      (join
        (mapWrg
          (lambda (c)
            (toGlobal
              (mapLcl
                (lambda (x) x)
                (iterate #2
                  (lambda (a)
                    (join
                      (mapLcl
                        (lambda (pair) (toLocal (reduceSeqUnroll (lambda (p q) (+ p q)) 0.0f pair)))
                        (split #2 a))))
                  (join
                    (mapLcl
                      (lambda (row) (toLocal (reduceSeq (lambda (acc y) (+ acc y)) 0.0f row)))
                      (transpose (split #4 c))))))))
          (split #4 parts))))))
