;; Jacobi 3-D 19-point, clamped borders: the centre, its 6 face and 12 edge neighbours (no corners),
;; each with the weight that j3d27pt (Lift CGO'18 suite) gives it. (Lift's own "j3d19pt" test reads
;; only 17 points, as its comment says; see README.md.) grid[z][y][x], p[dz][dy][dx] as in j3d27pt:
;;   out = ( 0.7*FN + 1.2*FW + 1.5*F + 1.2*FE + 0.7*FS                                            (dz = 0)
;;         + 0.51*NW + 0.71*N + 0.91*NE + 1.21*W + 1.51*C + 1.21*E + 0.91*SW + 0.71*S + 0.51*SE  (dz = 1)
;;         + 0.72*BN + 1.22*BW + 1.52*B + 1.22*BE + 0.72*BS ) / 159                             (dz = 2)
;; size: X=512 Y=512 Z=512
;; data: jacobi3d_19pt.json
;; expect: [[[0.3249371, 0.36253145, 0.36110848, 0.33665094, 0.25788522, 0.13008648], [0.30248427, 0.30773586, 0.30622643, 0.25508648, 0.19562894, 0.121124215], [0.3248978, 0.32944182, 0.31386006, 0.265228, 0.18424529, 0.16653302], [0.24365567, 0.28343555, 0.3010849, 0.23378931, 0.21957548, 0.25222483], [0.18195754, 0.21704403, 0.20859277, 0.16584906, 0.17816038, 0.22194968]], [[0.33570755, 0.35991353, 0.32808176, 0.28995284, 0.24032232, 0.19375786], [0.32735065, 0.33249214, 0.31107706, 0.24166667, 0.19470125, 0.17441824], [0.27000788, 0.29704404, 0.30792454, 0.2644025, 0.2172327, 0.21362421], [0.20857705, 0.2740173, 0.3112107, 0.27054244, 0.21150944, 0.24045599], [0.19301102, 0.25675315, 0.29202044, 0.23110063, 0.21426888, 0.24319182]], [[0.29000786, 0.3108176, 0.27686322, 0.25621855, 0.22423743, 0.19447327], [0.3285849, 0.3343003, 0.25687894, 0.21935534, 0.2011478, 0.19577831], [0.2266195, 0.28613994, 0.28499213, 0.3029088, 0.24494497, 0.21890724], [0.1576258, 0.23977202, 0.27308962, 0.26620284, 0.25203615, 0.21778302], [0.21320756, 0.2965802, 0.2803066, 0.2483412, 0.21092768, 0.21838051]], [[0.2244497, 0.2545283, 0.25995284, 0.20213836, 0.180739, 0.15668239], [0.3120519, 0.3115566, 0.26712266, 0.18877359, 0.17826258, 0.17134434], [0.17944969, 0.23445755, 0.28683963, 0.28915882, 0.26324686, 0.19573113], [0.15522799, 0.19889937, 0.23812893, 0.26194182, 0.22579403, 0.14679246], [0.25410378, 0.23910378, 0.22670598, 0.18483491, 0.19893081, 0.19220126]]]
(define (pad2d-clamp l r xss) (map (lambda (row) (pad-clamp l r row)) (pad-clamp l r xss)))
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (at2 i j nbh) (at j (at i nbh)))
(define (pad3d-clamp l r xsss) (map (lambda (plane) (pad2d-clamp l r plane)) (pad-clamp l r xsss)))
(define (slide3d s t xsss)
  (map (lambda (w) (map transpose (transpose w))) (slide s t (map (lambda (plane) (slide2d s t plane)) xsss))))
(define (at3 i j k nbh) (at k (at j (at i nbh))))
(define (map3d f xsss) (map (lambda (plane) (map (lambda (row) (map f row)) plane)) xsss))
(define (cross p a b c d e)
  (+ (+ (+ (+ (* a (at2 0 1 p)) (* b (at2 1 0 p))) (* c (at2 1 1 p))) (* d (at2 1 2 p))) (* e (at2 2 1 p))))
(define (plane p a b c d e f g h i)
  (+ (+ (+ (+ (+ (+ (+ (+ (* a (at2 0 0 p)) (* b (at2 0 1 p))) (* c (at2 0 2 p)))
                    (* d (at2 1 0 p))) (* e (at2 1 1 p))) (* f (at2 1 2 p)))
           (* g (at2 2 0 p))) (* h (at2 2 1 p))) (* i (at2 2 2 p))))

(lift
  (X Y Z)
  ((array-type (array-type (array-type float X) Y) Z))
  (lambda (grid)
    (map3d (lambda (nbh)
             (/ (+ (+ (cross (at 0 nbh) 0.7f 1.2f 1.5f 1.2f 0.7f)
                      (plane (at 1 nbh) 0.51f 0.71f 0.91f 1.21f 1.51f 1.21f 0.91f 0.71f 0.51f))
                   (cross (at 2 nbh) 0.72f 1.22f 1.52f 1.22f 0.72f))
                159.0f))
           (slide3d #3 #1 (pad3d-clamp #1 #1 grid)))))
