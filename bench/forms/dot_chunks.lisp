;; dot: s = sum_i x_i y_i
;; size: N=16777216
;; form: partial dot products of chunks of 64 pairs (split the zip), then the sum of the partials; multiply fused into the chunk's map
;; data: data/dot.json
;; expect: [36.203125]
(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ys)
    (reduce + 0.0f
      (join (map (lambda (chunk)
                   (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) chunk)))
                 (split #64 (zip xs ys)))))))
