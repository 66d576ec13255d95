;; Two nested `mapLcl` of 72 (rows in dimension 1, columns in dimension 0): one work-item per
;; element would make work-groups of 5,184, over the device limit, so the group stays within
;; 256 work-items (72 x 3: NVIDIA's driver refuses more for such a kernel) and the row loop
;; strides. The doubled tile is then summed.
;; data: maplcl_72x72.json
;; expect: [15552.0]
(lift
  (N)
  ((array-type (array-type float 72) N))
  (lambda (xs)
    (toGlobal (reduceSeq (lambda (a x) (+ a x)) 0.0f
      (join (join (join (mapWrg1 (lambda (band)
        (mapWrg (lambda (tile)
          (mapLcl1 (lambda (row) (mapLcl (lambda (x) (* x 2.0f)) row)) tile)) band))
        (split #1 (split #72 xs))))))))))
