;; The counting step of a radix sort built on a scan of vectors: each key's 2-bit digit (bits 2..3)
;; as a one-hot `int4`, scanned with `+`, gives at every position the running histogram of the
;; digits so far (the last is the whole histogram); each key's rank among the keys of its digit
;; before it is its digit's lane of that running count minus one.
;; data: scan_radix_histogram.json
;; expect: [[[0, 0, 1, 0], 0], [[1, 0, 1, 0], 0], [[1, 1, 1, 0], 0], [[1, 1, 2, 0], 1], [[1, 1, 2, 1], 0], [[2, 1, 2, 1], 1], [[2, 2, 2, 1], 1], [[2, 2, 2, 2], 1], [[3, 2, 2, 2], 2], [[3, 3, 2, 2], 2], [[3, 3, 3, 2], 2], [[3, 3, 3, 3], 2], [[4, 3, 3, 3], 3], [[4, 4, 3, 3], 3], [[4, 4, 3, 4], 3], [[5, 4, 3, 4], 4], [[5, 5, 3, 4], 4], [[5, 5, 4, 4], 3], [[5, 5, 4, 5], 4], [[6, 5, 4, 5], 5], [[6, 5, 5, 5], 4], [[6, 5, 5, 6], 5], [[7, 5, 5, 6], 6], [[7, 6, 5, 6], 5], [[7, 6, 6, 6], 5], [[7, 6, 6, 7], 6], [[8, 6, 6, 7], 7], [[8, 6, 7, 7], 6], [[8, 6, 7, 8], 7], [[9, 6, 7, 8], 8]]
(define (digit k) (bit-and (shr k 2) 3))
(define (lane d c)
  (if (= d 0) (vget #0 c) (if (= d 1) (vget #1 c) (if (= d 2) (vget #2 c) (vget #3 c)))))
(lift
  (N)
  ((array-type int N))
  (lambda (keys)
    (let counts
      (scan + (vec 0 0 0 0)
            (map (lambda (k)
                   (let d (digit k)
                     (vec (if (= d 0) 1 0) (if (= d 1) 1 0) (if (= d 2) 1 0) (if (= d 3) 1 0))))
                 keys))
      (map (lambda (p)
             (let c (get #1 p)
               (tuple c (- (lane (digit (get #0 p)) c) 1))))
           (zip keys counts)))))
