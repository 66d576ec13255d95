;; NUDA's MD5 benchmark as a brute-force search: the keys 0..N-1 (`--size N=2048`), each hashed
;; as the 4-byte little-endian message of one MD5 block, and the keys whose digest starts with
;; the byte 0x00 kept (a high-level `filter`). The 64 rounds are one loop of a work-item over
;; a tuple state (a, b, c, d, round), `iterate #64`, reading MD5's constants from the tables
;; `ks` (floor(|sin(i+1)| * 2^32)) and `ss` (the rotations). Expected values:
;; scripts/loop_examples.py (Python's hashlib).
;; data: md5_search.json
;; sizes: N=2048
;; expect: [277, 527, 686, 929, 1004, 1128, 1265, 1307, 1436, 1600, 1668, 1889, 2011]
(define (md5-word key g)
  (if (= g 0) key (if (= g 1) 0x80u (if (= g 14) 32u 0u))))
(define (md5-round key ks ss st)
  (let a (get #0 st)
    (let b (get #1 st)
      (let c (get #2 st)
        (let d (get #3 st)
          (let i (get #4 st)
            (let r (/ i 16)
              (let f (if (= r 0) (bit-or (bit-and b c) (bit-and (bit-not b) d))
                       (if (= r 1) (bit-or (bit-and d b) (bit-and (bit-not d) c))
                         (if (= r 2) (bit-xor b (bit-xor c d))
                           (bit-xor c (bit-or b (bit-not d))))))
                (let g (if (= r 0) i
                         (if (= r 1) (% (+ (* 5 i) 1) 16)
                           (if (= r 2) (% (+ (* 3 i) 5) 16) (% (* 7 i) 16))))
                  (let sum (+ (+ (+ f a) (at i ks)) (md5-word key g))
                    (tuple d (+ b (rotl sum (at i ss))) b c (+ i 1))))))))))))
(define (md5-h0 key ks ss)
  (+ 0x67452301u
     (get #0 (iterate #64 (lambda (st) (md5-round key ks ss st))
               (tuple 0x67452301u 0xefcdab89u 0x98badcfeu 0x10325476u 0)))))
(lift
  (N)
  ((array-type uint 64) (array-type uint 64))
  (lambda (ks ss)
    (filter (lambda (key) (= (bit-and (md5-h0 key ks ss) 0xffu) 0u))
      (generate N (lambda (i) (to-uint i))))))
