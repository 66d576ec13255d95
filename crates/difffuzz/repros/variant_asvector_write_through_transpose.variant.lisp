(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let tmp2
      (let k1
        (let tmp0
          (transpose (split #4 (asScalar (toGlobal (mapGlb (lambda (x3) x3) (asVector #4 xs))))))
          (toGlobal (mapGlb (lambda (v1) (reduceSeq (lambda (p1 p2) (+ p1 p2)) 0.0f v1)) tmp0)))
        (join k1))
      (toGlobal (reduceSeq (lambda (p1_2 p2_2) (+ p1_2 p2_2)) 0.0f tmp2)))))
