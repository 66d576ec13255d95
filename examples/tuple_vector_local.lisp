;; Tuples of a float3 and a float staged in local memory, read back field by field.
;; data: tuple_vector_local.json
;; expect: [[0.5, [2.5, 4.5, 6.5]], [1.5, [9.5, 11.5, 13.5]], [-1.0, [13.0, 15.0, 17.0]], [2.0, [2.0, 4.0, 6.0]]]
(lift
  (N)
  ((array-type (tuple-type (vector-type float 3) float) N))
  (lambda (ps)
    (join (mapWrg (lambda (g)
                    (mapLcl (lambda (q) (tuple (get #1 q) (+ (get #0 q) (get #1 q))))
                            (toLocal (mapLcl (lambda (p) (tuple (* (get #0 p) 2.0f) (get #1 p))) g))))
                  (split #2 ps)))))
