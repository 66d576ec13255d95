(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let tmp3
      (let k1
        (let tmp1
          (transpose
            (toGlobal (mapWrg (lambda (chunk0) (mapLcl (lambda (p3) 0.0f) chunk0)) (split #500 xs))))
          (toGlobal (mapGlb (lambda (v2) (reduceSeq (lambda (p1 p2) (+ p1 p2)) 0.0f v2)) tmp1)))
        (join k1))
      (toGlobal (reduceSeq (lambda (p1_2 p2_2) (+ p1_2 p2_2)) 0.0f tmp3)))))
