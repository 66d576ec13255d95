;; Convolution, row pass: NVIDIA SDK convolutionSeparable, 17 taps (radius 8), clamped borders.
;;   out[i][j] = sum_{k<17} img[i][clamp(j + k - 8)] * weights[k]
;; CGO'17 large size: 8192 x 8192 (--size H=8192 --size W=8192); timed with the column pass.
;; data: convolution.json
;; expect: [[-1.8125, -2.75, -1.6875, -1.6875, -2.5, -3.75, -2.125], [4.25, 3.0, 2.8125, 3.375, 2.4375, 0.0625, 0.5], [1.0625, 0.1875, -0.9375, -0.375, 0.6875, 1.4375, -1.6875], [-4.375, -0.6875, -2.9375, -3.8125, 0.375, 2.6875, -1.625], [-2.8125, -5.5, -3.375, -2.625, -3.4375, -3.5, -1.4375], [-5.4375, -2.125, -2.3125, -2.9375, -1.25, 1.0625, 1.4375]]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (H W)
  ((array-type (array-type float W) H) (array-type float 17))
  (lambda (img weights)
    (map (lambda (row)
           (join (map (lambda (nbh) (dot-product nbh weights))
                      (slide #17 #1 (pad-clamp #8 #8 row)))))
         img)))
