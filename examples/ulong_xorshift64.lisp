;; xorshift64* (Vigna): x ^= x >> 12; x ^= x << 25; x ^= x >> 27; output x * 0x2545F4914F6CDD1D,
;; all in ulong, wrapping modulo 2^64; and a double in [0, 1) from the output's top 53 bits.
;; Expected values: scripts/int_examples.py (numpy uint64).
;; data: ulong_xorshift64.json
;; expect: [[33554433, 5180492295206395165, 0.28083505005035947], [3656804824253551335, 16620430977058721579, 0.900995368648622], [18442240611487580160, 17954947803125907456, 0.9733396707506472], [9225623905404715008, 17367356451260989440, 0.9414862797393653], [2862529821221997860, 4971470804507087124, 0.2695039723347421], [144150377817964576, 4396774442519208864, 0.2383496201254034]]
(define (step x)
  (let a (bit-xor x (shr x 12))
    (let b (bit-xor a (shl a 25))
      (bit-xor b (shr b 27)))))
(lift
  (N)
  ((array-type ulong N))
  (lambda (states)
    (toGlobal
      (mapGlb
        (lambda (x)
          (let next (step x)
            (let out (* next 0x2545F4914F6CDD1Dul)
              (tuple next out (* (to-double (shr out 11)) 1.1102230246251565e-16d)))))
        states))))
