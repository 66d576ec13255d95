;; Scalars of padded vectors, copied through local memory by work-items that each take one
;; scalar: the lane a work-item reads is known only at run time and the padded vectors are not
;; in memory, so the lane is chosen with a select over the vector's lanes. Found by the
;; differential fuzzer (seed 12, cases 735, 4067, 4474, 5153: "internal: asScalar with a lane
;; index unknown at compile time needs the vectors in memory").
;; data: as_scalar_pad.json
;; expect: [24.0,22.0,20.0,18.0,16.0,14.0,12.0,10.0,8.0,6.0,4.0,2.0,8.0,6.0,4.0,2.0,56.0,54.0,52.0,50.0,48.0,46.0,44.0,42.0,40.0,38.0,36.0,34.0,32.0,30.0,28.0,26.0,64.0,62.0,60.0,58.0,64.0,62.0,60.0,58.0,64.0,62.0,60.0,58.0,64.0,62.0,60.0,58.0]
(lift
  (N)
  ((array-type (vector-type float 4) N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal (mapLcl (lambda (x) (* x 2.0f)) (reverse (toLocal (mapLcl (lambda (x) x) chunk))))))
        (split #16 (asScalar (pad-clamp #1 #3 xs)))))))
