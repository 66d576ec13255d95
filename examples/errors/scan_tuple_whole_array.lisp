;; A scan of tuples over a whole array would carry a tuple between work-groups, which `scanGlb`
;; does not (yet); inside a work-item (`scanSeq`, or a scan of each row under a map) it may.
;; error: a scan of (float, int) over the whole array is not supported yet
(lift (N) ((array-type float N) (array-type int N))
  (lambda (xs ks)
    (scan (lambda (a b) (tuple (+ (get #0 a) (get #0 b)) (+ (get #1 a) (get #1 b))))
          (tuple 0.0f 0)
          (zip xs ks))))
