;; `toPrivate` and `iterate` in private memory: each work-item copies its chunk of 4 into
;; private memory, doubles it three times there (`iterate #3`, swapping two private buffers)
;; and writes the chunk back to global memory.
;; data: private_iterate.json
;; expect: [8.0, 4.0, -2.0, 16.0, 24.0, 0.0, -8.0, 1.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapGlb
        (lambda (chunk)
          (toGlobal
            (mapSeq (lambda (x) x)
              (iterate #3
                (lambda (a) (toPrivate (mapSeq (lambda (x) (* x 2.0f)) a)))
                (toPrivate (mapSeq (lambda (x) x) chunk))))))
        (split #4 xs)))))
