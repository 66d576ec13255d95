;; `dot` on float4: each work-item computes the dot product of four lanes of xs and ys, so
;; the result holds N/4 partial dot products.
;; data: vector_dot.json
;; expect: [4.5, 5.5]
(lift
  (N)
  ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (toGlobal
      (mapGlb (lambda (p) (dot (get #0 p) (get #1 p)))
              (zip (asVector #4 xs) (asVector #4 ys))))))
