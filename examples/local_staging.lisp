;; Work-groups with local-memory staging: each work-group copies its chunk of 4 into local
;; memory (`toLocal (mapLcl id chunk)`), then every work-item reads the element of ANOTHER
;; work-item (the chunk reversed), which needs a barrier between the two `mapLcl`s.
;; data: local_staging.json
;; expect: [6.0, 4.0, 2.0, 0.0, 14.0, 12.0, 10.0, 8.0, 22.0, 20.0, 18.0, 16.0, 30.0, 28.0, 26.0, 24.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal
            (mapLcl (lambda (x) (* x 2.0f))
                    (reverse (toLocal (mapLcl (lambda (x) x) chunk))))))
        (split #4 xs)))))
