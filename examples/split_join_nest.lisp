;; A deeper split/join nest on a 2-D grid: `split #2` twice gives [[[float]2]2](N/4);
;; dimension 1 walks the outer chunks, dimension 0 the pairs, and each pair is a sequential loop.
;; Two `join`s flatten the result back to [float]N.
;; data: split_join_nest.json
;; expect: [-10.5, -7.5, -4.5, -1.5, 1.5, 4.5, 7.5, 10.5, 13.5, 16.5, 19.5, 22.5, 25.5, 28.5, 31.5, 34.5]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (join
        (mapGlb1
          (lambda (quad)
            (mapGlb (lambda (pair) (toGlobal (mapSeq (lambda (x) (* x 3.0f)) pair)))
                    quad))
          (split #2 (split #2 xs)))))))
