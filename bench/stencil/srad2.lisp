;; Rodinia SRAD (srad_v1), second kernel: the divergence and the image update, clamped borders
;; (the coefficient c of the point itself serves north and west, c of the south and east neighbours
;; the other two, as in Rodinia); dN, dS, dW, dE and c are the first kernel's outputs:
;;   D = c[i][j]*dN + c[i+1][j]*dS + c[i][j]*dW + c[i][j+1]*dE
;;   out[i][j] = J[i][j] + 0.25 * lam * D  (lam: Rodinia's lambda)
;; size: H=502 W=458
;; data: srad2.json
;; expect: [[2.3428936, 1.6340276, 1.4341846, 2.7324812, 1.4025435, 1.6702121, 2.151194, 2.4233975, 2.2241826], [2.4923563, 1.1449419, 1.7681495, 2.0937872, 1.8500623, 1.7330072, 1.6026275, 1.0899181, 1.2114898], [2.0283103, 1.9131523, 2.7065911, 1.5893087, 2.5001934, 1.5067512, 1.3465214, 1.3114887, 1.7119677], [1.5329903, 2.5560894, 2.5731013, 2.4037783, 1.75599, 1.094655, 1.4891698, 1.8036504, 2.0683615], [1.8279313, 2.1500957, 1.88865, 2.218429, 1.0692414, 2.6468518, 1.9088461, 1.429238, 2.4366558], [1.7426485, 2.5525937, 1.6833471, 2.588885, 1.1383597, 1.7339686, 1.3908035, 1.6829901, 1.85777], [2.722735, 1.964797, 2.3221512, 2.217246, 1.7322668, 1.8075689, 1.2385359, 1.981992, 1.796875]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))

(lift
  (H W)
  ((array-type (array-type float W) H) (array-type (array-type float W) H) (array-type (array-type float W) H)
   (array-type (array-type float W) H) (array-type (array-type float W) H) (array-type (array-type float W) H) float)
  (lambda (j dn ds dw de c lam)
    (map (lambda (rows)
           (map (lambda (p)
                  (let cc (get #5 p)
                    (+ (get #0 p)
                       (* (* 0.25f lam)
                          (+ (+ (+ (* (at2 0 0 cc) (get #1 p)) (* (at2 1 0 cc) (get #2 p)))
                                (* (at2 0 0 cc) (get #3 p)))
                             (* (at2 0 1 cc) (get #4 p)))))))
                (zip (get #0 rows) (get #1 rows) (get #2 rows) (get #3 rows) (get #4 rows) (get #5 rows))))
         (zip j dn ds dw de (slide2d #2 #1 (pad2d-clamp #0 #1 c))))))
