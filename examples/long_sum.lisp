;; Reductions of the wide and unsigned integers, each a high-level `reduce` the rewriter splits
;; into kernels: the 64-bit sum of ints whose int sum would overflow (each converted with
;; to-long), the sum of longs beyond 2^32, the uint maximum of values above 2^31 (an int
;; comparison would order them wrongly), and the uint sum, which wraps modulo 2^32.
;; Expected values: scripts/int_examples.py (numpy int64 / uint32).
;; data: long_sum.json
;; expect: [[927822098365], [113854965319868575], [4290582110], [1205530635]]
(lift
  (N)
  ((array-type int N) (array-type long N) (array-type uint N))
  (lambda (ints longs us)
    (tuple
      (reduce + 0l (map (lambda (i) (to-long i)) ints))
      (reduce + 0l longs)
      (reduce max 0u us)
      (reduce + 0u us))))
