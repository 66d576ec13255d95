;; An `iterate-until` directly inside `mapWrg` would be run by every work-item of the group,
;; each deciding its own exit, around the barriers of its `mapLcl`s, which need all of them.
;; error: `iterate-until` directly inside `mapWrg` (outside `mapLcl`) is not supported yet
(lift (N) ((array-type float N))
  (lambda (xs)
    (join
      (mapWrg
        (lambda (chunk)
          (toGlobal
            (mapLcl (lambda (x) x)
              (iterate-until #10
                (lambda (prev next) (< (at 0 next) 1.0f))
                (lambda (s) (toLocal (mapLcl (lambda (x) (* x 0.5f)) s)))
                (toLocal (mapLcl (lambda (x) x) chunk))))))
        (split #64 xs)))))
