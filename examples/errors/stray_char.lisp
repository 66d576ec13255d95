;; A character that is not part of any token.
;; error: unexpected character `@`
(lift (N) ((array-type float N))
  (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x @2.0f)) xs))))
