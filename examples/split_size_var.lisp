;; `split M` by a size variable: the kernel indexes with the size parameter `v_M` (it once
;; printed the bare name `M`, which the driver rejected). N = 4 rows of M = 2, in blocks of M rows.
;; data: split_size_var.json
;; expect: [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]
(lift
  (M N)
  ((array-type (array-type float M) N))
  (lambda (xs) (mapGlb (lambda (blk) (mapSeq (lambda (row) (mapSeq (lambda (x) x) row)) blk)) (split M xs))))
