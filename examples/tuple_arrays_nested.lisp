;; Tuples holding arrays two array levels deep, written by work-items of work-groups: per
;; element, the sum of its group's pair of rows next to the element. The zip over the component
;; buffers hands each of them every index, so it pairs elements at any depth.
;; data: hl_stencil.json
;; expect: [[[[10.0], 1.0], [[10.0], 2.0]], [[[10.0], 3.0], [[10.0], 4.0]], [[[9.0], 5.0], [[9.0], 0.0]], [[[9.0], -2.0], [[9.0], 6.0]]]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapWrg (lambda (g)
                (toGlobal (mapLcl (lambda (r) (mapSeq (lambda (x) (tuple (reduceSeq + 0.0f (join g)) x)) r)) g)))
              (split #2 (split #2 xs))))))
