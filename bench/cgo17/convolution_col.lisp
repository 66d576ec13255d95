;; Convolution, column pass: NVIDIA SDK convolutionSeparable, 17 taps (radius 8), clamped borders.
;;   out[i][j] = sum_{k<17} img[clamp(i + k - 8)][j] * weights[k]
;; A window of 17 rows, transposed, is a row of 17-element columns.
;; CGO'17 large size: 8192 x 8192 (--size H=8192 --size W=8192); timed with the row pass.
;; data: convolution.json
;; expect: [[-1.625, -5.4375, -4.3125, 1.1875, -4.75, -5.1875, -4.5], [-0.75, -4.125, -2.9375, 0.75, -3.375, -4.125, -3.25], [-0.8125, -1.3125, -1.625, -0.75, -2.1875, -1.6875, -3.4375], [-1.8125, -2.5625, -3.4375, -0.5625, -2.75, -3.375, -3.0], [-0.25, -1.5, -2.0, 0.5625, -1.4375, -2.1875, -2.8125], [0.75, 0.875, -0.625, 0.3125, 1.1875, -0.6875, -0.6875]]
(define (dot-product xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))

(lift
  (H W)
  ((array-type (array-type float W) H) (array-type float 17))
  (lambda (img weights)
    (map (lambda (rows)
           (join (map (lambda (col) (dot-product col weights)) (transpose rows))))
         (slide #17 #1 (pad-clamp #8 #8 img)))))
