;; `scan` is part of the language (LANGUAGE.md) but not implemented yet: one message at the
;; name, not "unknown name".
;; error: `scan` is not supported yet
(lift (N) ((array-type float N))
  (lambda (xs) (scan + 0.0f xs)))
