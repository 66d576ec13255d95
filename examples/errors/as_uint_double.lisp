;; `as-uint` reinterprets 32 bits; a double has 64.
;; error: `as-uint` of double: reinterpreting needs the same width, and double has 64 bits, uint has 32
(lift (N) ((array-type double N))
  (lambda (ds) (toGlobal (mapGlb (lambda (d) (as-uint d)) ds))))
