;; Marsaglia's xorshift32 random-number step over uint seeds (x ^= x << 13; x ^= x >> 17;
;; x ^= x << 5): one step, three steps, and the top 8 bits of the first. Unsigned shifts are
;; logical and everything wraps at 32 bits; the counts are int literals (OpenCL allows a count
;; of another integer type) or uint ones. Expected values: scripts/int_examples.py (numpy).
;; data: uint_xorshift.json
;; expect: [[270369, 2647435461, 0], [723471715, 2064144800, 43], [253983, 1958451267, 0], [2148024320, 2861646152, 128], [2714967881, 1250077441, 161], [1199382711, 3129746520, 71], [0, 0, 0]]
(define (xorshift32 x)
  (let a (bit-xor x (shl x 13))
    (let b (bit-xor a (shr a 17u))
      (bit-xor b (shl b 5)))))
(lift
  (N)
  ((array-type uint N))
  (lambda (seeds)
    (toGlobal
      (mapGlb
        (lambda (s)
          (let s1 (xorshift32 s)
            (tuple s1 (xorshift32 (xorshift32 s1)) (shr s1 24u))))
        seeds))))
