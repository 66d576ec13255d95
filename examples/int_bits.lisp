;; Bit reinterpretation and conversions of the integer types. For each float x: its bits
;; (as-uint), the float whose bits are those of x's bits plus one (the next float away from
;; zero), as-int of x, to-uint (toward zero, saturating: negatives give 0), to-long, to-ulong
;; and to-int (saturating too: 1e20 gives 2147483647); for each double d: its bits (as-ulong)
;; and back (as-double), as-long of d. For each uint u: to-int (the same bits: 4294967295
;; gives -1), to-float (rounded to nearest), to-long, and to-uint of (to-int u) back.
;; Expected values: scripts/int_examples.py (numpy views and Python integers).
;; data: int_bits.json
;; expect: [[[1065353216, 1.0000001192092896, 1065353216, 1, 1, 1, 1], [2147483648, -1.401298464324817e-45, -2147483648, 0, 0, 0, 0], [3223322624, -2.500000238418579, -1071644672, 0, -2, 0, -2], [1328730206, 3000000256.0, 1328730206, 3000000000, 3000000000, 3000000000, 2147483647], [1621981420, 1.0000001080018076e+20, 1621981420, 4294967295, 9223372036854775807, 18446744073709551615, 2147483647], [3769465068, -1.0000001080018076e+20, -525502228, 0, -9223372036854775808, 0, -2147483648], [1036831949, 0.10000000894069672, 1036831949, 0, 0, 0, 0], [1266679808, 16777218.0, 1266679808, 16777216, 16777216, 16777216, 16777216]], [[4607182418800017408, 1.0, 4607182418800017408], [13835058055282163712, -2.0, -4611686018427387904], [4591870180066957722, 0.1, 4591870180066957722], [9094988921128908188, 1e+300, 9094988921128908188], [1, 5e-324, 1]], [[0, 0.0, 0, 0], [1, 1.0, 1, 1], [2147483647, 2147483648.0, 2147483647, 2147483647], [-2147483648, 2147483648.0, 2147483648, 2147483648], [-1, 4294967296.0, 4294967295, 4294967295], [16777217, 16777216.0, 16777217, 16777217]]]
(lift
  (N M K)
  ((array-type float N) (array-type double M) (array-type uint K))
  (lambda (xs ds us)
    (tuple
      (toGlobal
        (mapGlb
          (lambda (x)
            (tuple (as-uint x) (as-float (+ (as-uint x) 1u)) (as-int x) (to-uint x) (to-long x) (to-ulong x)
                   (to-int x)))
          xs))
      (toGlobal (mapGlb (lambda (d) (tuple (as-ulong d) (as-double (as-ulong d)) (as-long d))) ds))
      (toGlobal
        (mapGlb (lambda (u) (tuple (to-int u) (to-float u) (to-long u) (to-uint (to-int u)))) us)))))
