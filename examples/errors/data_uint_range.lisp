;; A negative number in the data of a uint parameter: the message names the element.
;; data: data_uint_range.json
;; error-at: run
;; error: us[1]: -1 is out of range for a uint (32-bit unsigned: 0 to 4294967295)
(lift (N) ((array-type uint N))
  (lambda (us) (toGlobal (mapGlb (lambda (u) (bit-xor u 1u)) us))))
