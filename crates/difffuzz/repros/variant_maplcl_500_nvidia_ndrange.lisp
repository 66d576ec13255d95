;; difffuzz case 33:29 (shrunk): driver
;; signature: launch # (kernel `KERNEL_#`) has an invalid NDRange: the local size [#] has # work-items, but this kernel allows at most # on this device
;; evaluated with `difffuzz eval PROG DATA --variants 4 --random 6 --symbolic 0 --pick 14047918617995869739`
;; variant 9 of 35 in the cost model's order, picked at random (sizes known and built in, mapGlb work-group default): mapWrg 2 groups × mapLcl 500; separate kernel for an intermediate; mapGlb 500; separate kernel for an intermediate; final reduceSeq over 500 | (reduce @0 @1 (join (map (reducef @0 @1) (transpose (map (mapf @2) (split 500 xs))))))
;; OpenCL side: launch 0 (kernel `KERNEL_0`) has an invalid NDRange: the local size [500] has 500 work-items, but this kernel allows at most 256 on this device
;; the variant:
;; (lift
;;   (N)
;;   ((array-type float N))
;;   (lambda (xs)
;;     (let tmp3
;;       (let k1
;;         (let tmp1
;;           (transpose
;;             (toGlobal (mapWrg (lambda (chunk0) (mapLcl (lambda (p3) 0.0f) chunk0)) (split #500 xs))))
;;           (toGlobal (mapGlb (lambda (v2) (reduceSeq (lambda (p1 p2) (+ p1 p2)) 0.0f v2)) tmp1)))
;;         (join k1))
;;       (toGlobal (reduceSeq (lambda (p1_2 p2_2) (+ p1_2 p2_2)) 0.0f tmp3)))))
;; data: repro.json
(lift
  (N)
  ((array-type float N))
  (lambda (xs) (reduce + 0.0f (map (lambda (p3) 0.0f) xs))))
