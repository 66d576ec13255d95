;; poisson3d, 19-point (Lift CGO'18 suite, from the PPCG stencil benchmarks), clamped borders;
;; grid[z][y][x]; F/B = z-1/z+1, N/S = y-1/y+1, W/E = x-1/x+1 (FN = z-1,y-1 and so on), clamped:
;;   out = 2.666*C - 0.166*(F + B + N + S + E + W)
;;       - 0.0833*(FN + BN + FS + BS + FW + BW + NW + SW + FE + BE + NE + SE)
;; size: X=512 Y=512 Z=512
;; data: poisson3d.json
;; expect: [[[-0.4887125, -0.46716252, 1.0744374, 0.0020249672, 0.39664996, -0.6132875], [1.1050999, 0.59498745, -0.74755, 1.2719749, -0.4461125, 1.292725], [-0.7485, -0.17541252, 1.4070374, -0.6548625, -0.22835001, 0.0020249672], [0.84516245, 0.42876247, -0.46716252, 0.28183746, 0.09471247, 0.7518249], [0.45023745, 1.0338124, 0.65818745, 0.34496248, 0.053287476, 0.22016247]], [[0.41769996, 1.230475, 0.59608746, 0.39759997, -0.4151, 1.0530374], [-0.477275, 0.5537124, 0.72028744, 1.626275, 0.5221, -0.622825], [0.84436244, 0.68869996, 0.66802496, -0.7382375, -0.092187524, 1.2518749], [-0.37352502, 0.18884996, -0.893975, -0.540775, -0.7798125, 1.2936], [0.16817497, 1.2729249, 0.6476249, -0.45682502, 0.38638747, -0.15466252]], [[-0.45682502, -0.4569, 0.94891244, 0.074687466, -0.41525, 0.28248745], [0.9073374, -0.09233753, -0.87315, -0.26897502, 0.79309994, -0.38328752], [-0.76925, -0.7903, 0.64704996, -0.5709875, 1.5428249, 1.1794374], [-0.10355002, -0.41517502, 1.5325624, 1.3239625, -0.56035, 1.3870124], [-0.499125, 0.7413374, 0.9085124, 0.77257496, 0.92838746, -0.16492502]], [[0.92903745, -0.43600002, -0.4464125, 1.3768249, 0.064124964, -0.13383752], [0.98204994, 1.480575, -0.24822502, 1.1162374, 0.27302495, 1.3558499], [1.2727749, 0.064349964, 0.84523743, 0.08502497, 0.16824996, 0.033112466], [0.67828745, -0.4984, 0.42883745, 0.27214995, -0.66565, -0.6341875], [-0.4470625, 0.9387999, 0.06427497, -0.436075, 0.40736246, 0.38646245]]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (pad3d-clamp l r xsss) (map (lambda (plane) (pad2d-clamp l r plane)) (pad-clamp l r xsss)))
(define (slide3d s t xsss)
  (map (lambda (w) (map transpose (transpose w))) (slide s t (map (lambda (plane) (slide2d s t plane)) xsss))))
(define (at3 i j k nbh) (at k (at j (at i nbh))))
(define (map3d f xsss) (map (lambda (plane) (map (lambda (row) (map f row)) plane)) xsss))
(define (poisson c n s e w f b fn bn fs bs fw bw nw sw fe be ne se)
  (- (- (* 2.666f c) (* 0.166f (+ (+ (+ (+ (+ f b) n) s) e) w)))
     (* 0.0833f (+ (+ (+ (+ (+ (+ (+ (+ (+ (+ (+ fn bn) fs) bs) fw) bw) nw) sw) fe) be) ne) se))))

(lift
  (X Y Z)
  ((array-type (array-type (array-type float X) Y) Z))
  (lambda (grid)
    (map3d (lambda (nbh)
             (poisson (at3 1 1 1 nbh) (at3 1 0 1 nbh) (at3 1 2 1 nbh) (at3 1 1 2 nbh) (at3 1 1 0 nbh)
                      (at3 0 1 1 nbh) (at3 2 1 1 nbh)
                      (at3 0 0 1 nbh) (at3 2 0 1 nbh) (at3 0 2 1 nbh) (at3 2 2 1 nbh)
                      (at3 0 1 0 nbh) (at3 2 1 0 nbh) (at3 1 0 0 nbh) (at3 1 2 0 nbh)
                      (at3 0 1 2 nbh) (at3 2 1 2 nbh) (at3 1 0 2 nbh) (at3 1 2 2 nbh)))
           (slide3d #3 #1 (pad3d-clamp #1 #1 grid)))))
