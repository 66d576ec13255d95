;; difffuzz case 33:80 (shrunk): internal
;; signature: internal: cannot write through asVector here
;; evaluated with `difffuzz eval PROG DATA --variants 4 --random 6 --symbolic 0 --pick 7484598460084949854`
;; variant 8 of 24 in the cost model's order, picked at random (sizes known and built in, mapGlb work-group default): mapGlb 2; separate kernel for an intermediate; mapGlb 4; separate kernel for an intermediate; final reduceSeq over 4 | (reduce @0 @1 (join (map (reducef @0 @1) (transpose (split 4 (asScalar (map @2 (asVector 4 xs))))))))
;; OpenCL side: internal: cannot write through asVector here
;; the variant:
;; (lift
;;   (N)
;;   ((array-type float N))
;;   (lambda (xs)
;;     (let tmp2
;;       (let k1
;;         (let tmp0
;;           (transpose (split #4 (asScalar (toGlobal (mapGlb (lambda (x3) x3) (asVector #4 xs))))))
;;           (toGlobal (mapGlb (lambda (v1) (reduceSeq (lambda (p1 p2) (+ p1 p2)) 0.0f v1)) tmp0)))
;;         (join k1))
;;       (toGlobal (reduceSeq (lambda (p1_2 p2_2) (+ p1_2 p2_2)) 0.0f tmp2)))))
;; data: repro.json
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (reduce + 0.0f (map (lambda (x3) x3) xs))))
