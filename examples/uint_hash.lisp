;; Hashes of byte rows in uint arithmetic: 32-bit FNV-1a (h = (h xor byte) * 16777619 from
;; 0x811c9dc5, a sequential fold per row), then one MD5-style step on the hash b:
;; F = (b and c) or (not b and d), a' = b + rotl(a + F + K + b, 7) with MD5's initial words
;; a = 0x67452301, c = 0x98badcfe, d = 0x10325476 and K = 0xd76aa478. Every product and sum
;; wraps modulo 2^32. Expected values: scripts/int_examples.py (numpy uint32).
;; data: uint_hash.json
;; expect: [[3611200775, 3956738138], [1994041997, 2575445232], [2615243109, 1034427294], [1823345245, 2026190015], [1811325981, 412528254], [747099814, 566321511]]
(define (fnv1a row)
  (reduceSeq (lambda (h b) (* (bit-xor h b) 16777619u)) 0x811c9dc5u row))
(define (md5-step b)
  (let f (bit-or (bit-and b 0x98badcfeu) (bit-and (bit-not b) 0x10325476u))
    (+ b (rotl (+ (+ (+ 0x67452301u f) 0xd76aa478u) b) 7))))
(lift
  (N M)
  ((array-type (array-type uint M) N))
  (lambda (rows)
    (join
      (mapGlb
        (lambda (row)
          (toGlobal (mapSeq (lambda (h) (tuple h (md5-step h))) (fnv1a row))))
        rows))))
