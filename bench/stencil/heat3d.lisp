;; heat3d (Lift CGO'18 suite, from the PPCG stencil benchmarks), clamped borders; the grid is
;; grid[z][y][x]; F/B = z-1/z+1, N/S = y-1/y+1, W/E = x-1/x+1, indices clamped:
;;   out = 0.125*(B - 2*C + F) + 0.125*(S - 2*C + N) + 0.125*(E - 2*C + W) + C
;; size: X=512 Y=512 Z=512
;; data: heat3d.json
;; expect: [[[1.9375, 3.125, 3.21875, 1.578125, 1.5625, 2.328125], [2.8125, 2.75, 2.734375, 2.75, 2.671875, 2.6875], [3.1875, 3.046875, 3.03125, 2.78125, 1.4375, 0.96875], [2.59375, 2.21875, 2.359375, 2.8125, 2.140625, 1.390625], [2.3125, 0.859375, 1.046875, 2.515625, 2.34375, 2.625]], [[2.046875, 2.546875, 3.03125, 2.21875, 2.75, 2.515625], [2.328125, 2.546875, 2.625, 2.515625, 2.671875, 2.140625], [2.265625, 2.484375, 2.921875, 3.203125, 2.109375, 2.078125], [1.828125, 2.3125, 2.53125, 3.109375, 2.703125, 2.296875], [2.03125, 1.9375, 1.59375, 2.734375, 2.421875, 1.859375]], [[1.9375, 2.328125, 2.859375, 1.9375, 2.328125, 1.671875], [1.5, 1.9375, 2.28125, 2.265625, 1.796875, 0.8125], [1.421875, 1.5, 1.9375, 2.34375, 1.375, 1.375], [1.671875, 1.84375, 1.578125, 1.515625, 1.4375, 2.1875], [2.09375, 2.140625, 1.453125, 1.046875, 1.359375, 2.234375]], [[2.46875, 2.734375, 2.625, 1.875, 1.96875, 1.078125], [0.828125, 1.84375, 1.921875, 2.0625, 2.53125, 1.375], [0.796875, 1.265625, 1.59375, 2.484375, 2.484375, 2.1875], [0.9375, 1.765625, 1.84375, 1.546875, 2.0625, 2.4375], [0.390625, 1.03125, 1.125, 0.546875, 1.578125, 1.5]]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (pad3d-clamp l r xsss) (map (lambda (plane) (pad2d-clamp l r plane)) (pad-clamp l r xsss)))
(define (slide3d s t xsss)
  (map (lambda (w) (map transpose (transpose w))) (slide s t (map (lambda (plane) (slide2d s t plane)) xsss))))
(define (at3 i j k nbh) (at k (at j (at i nbh))))
(define (map3d f xsss) (map (lambda (plane) (map (lambda (row) (map f row)) plane)) xsss))
(define (heat c n s e w f b)
  (+ (+ (+ (* 0.125f (+ (- b (* 2.0f c)) f)) (* 0.125f (+ (- s (* 2.0f c)) n))) (* 0.125f (+ (- e (* 2.0f c)) w))) c))

(lift
  (X Y Z)
  ((array-type (array-type (array-type float X) Y) Z))
  (lambda (grid)
    (map3d (lambda (nbh)
             (heat (at3 1 1 1 nbh) (at3 1 0 1 nbh) (at3 1 2 1 nbh) (at3 1 1 2 nbh) (at3 1 1 0 nbh)
                   (at3 0 1 1 nbh) (at3 2 1 1 nbh)))
           (slide3d #3 #1 (pad3d-clamp #1 #1 grid)))))
