;; Stream compaction built on `scan`: the positive elements of xs, in order, then zeros. A scan of
;; the keep flags gives every element the number of kept elements up to it (a kept element's
;; place in the output, plus one); output slot j gathers the kept element whose count is j + 1,
;; the first count above j, found by a binary search over the nondecreasing counts (a loop of one
;; work-item, `iterate-until`, between 0 and the length counted by a `reduce`); slots past the
;; number kept hold 0. Expected values: scripts/scan_examples.py (numpy).
;; data: scan_compact.json
;; expect: [1.5, 3.25, 1.75, 3.5, 2.0, 2.5, 0.25, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
(define (keep x) (> x 0.0f))
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (let counts (scan + 0 (map (lambda (x) (if (keep x) 1 0)) xs))
      (let n (reduce + 0 (map (lambda (x) 1) xs))
        (map (lambda (j)
               (let s (iterate-until #40
                        (lambda (prev next) (>= (get #0 next) (get #1 next)))
                        (lambda (s)
                          (let mid (/ (+ (get #0 s) (get #1 s)) 2)
                            (if (> (at mid counts) j)
                                (tuple (get #0 s) mid)
                                (tuple (+ mid 1) (get #1 s)))))
                        (tuple 0 (at 0 n)))
                 (if (< (get #0 s) (at 0 n)) (at (get #0 s) xs) 0.0f)))
             (generate N (lambda (i) i)))))))
