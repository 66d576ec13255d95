;; Integer semantics that C leaves undefined or easy to get wrong, fixed the same on the
;; interpreter and on OpenCL: signed int and long arithmetic wraps (INT_MAX + 1 is INT_MIN;
;; the negation and abs of INT_MIN, and INT_MIN / -1, are INT_MIN); `shr` is arithmetic on int
;; and logical on uint; shift and rotate counts are taken modulo the width (a count of 33
;; shifts an int by 1, of -1 by 31); unsigned comparisons, min, max, division and remainder
;; see values above 2^31 as large. Each pair (a, b) of ints gives a tuple of them all.
;; Expected values: scripts/int_examples.py (numpy int32/uint32/int64 and Python integers).
;; data: int_wrap.json
;; expect: [[-2147483648, 2147483647, -2147483647, 2147483647, 134217727, 134217727, -2, -2147483648, -129, false, 2147483647, 1, 2147483647, 0, 4611686024869838847, -1097364144129, 1, 2147483647, -2147483648, 2147483647, 0], [2147483647, -2147483648, -2147483648, -2147483648, -134217728, 134217728, 0, 0, 128, true, 4294967295, 2147483648, 0, 2147483648, 0, -2147483648, -2147483648, -1, 2147483647, -2147483648, 0], [1, -2, 1, 1, -1, 268435455, -2, -2147483648, -1, false, 4294967295, 2, 2147483647, 1, -1, 1099511627775, 2, -1, 0, 0, -1], [123457789, -1097262584, -123456789, 123456789, 7716049, 7716049, 246913578, -2147483648, 1540166919, false, 123456789, 1000, 123456, 789, -2204193661661244627, 6614966517544766741, 256, 123457533, -123456790, 123456, 789], [-98772, 691355, 98765, 98765, -6173, 268429283, -197530, -2147483648, -25283585, true, 4294967289, 4294868531, 0, 4294868531, -963405683847125, 108593265917197875, -98767, -5, 98764, 14109, -2], [5, 0, 0, 0, 0, 0, 0, 0, 0, true, 5, 0, 0, 0, 0, 0, 0, 5, -1, 0, 0], [131072, 0, -65536, 65536, 4096, 4096, 131072, 0, 16777216, false, 65536, 65536, 1, 0, 281474976710656, 72057594037993472, 65536, 65536, -65537, 1, 0]]
(lift
  (N)
  ((array-type int N) (array-type int N))
  (lambda (as bs)
    (toGlobal
      (mapGlb
        (lambda (p)
          (let a (get #0 p)
            (let b (get #1 p)
              (let ua (as-uint a)
                (let ub (as-uint b)
                  (let la (to-long a)
                    (tuple
                      (+ a b) (* a b) (- a) (abs a)
                      (shr a 4) (shr ua 4u) (shl a 33) (shl a -1) (rotl a 8)
                      (< ua ub) (max ua ub) (min ua ub) (/ ua (max ub 1u)) (% ua (max ub 1u))
                      (* (* la la) la) (bit-xor (shl la 40) la)
                      (bit-and a b) (bit-or a b) (bit-not a) (/ a b) (% a b))))))))
        (zip as bs)))))
