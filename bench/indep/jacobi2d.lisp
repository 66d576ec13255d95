;; One step of a 2-D 5-point Jacobi relaxation over the interior of an (H+2) x (W+2) grid, written
;; as a user would with LANGUAGE.md's `slide2d`: the 3 x 3 neighbourhoods of the grid, each the
;; mean of its centre and its four neighbours (`nbh[r][c]`: row `r`, column `c`).
(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))
(define (cell nbh r c) (at c (at r nbh)))
(lift
  (H W)
  ((array-type (array-type float (+ W 2)) (+ H 2)))
  (lambda (g)
    (map (lambda (nbhs)
           (map (lambda (nbh)
                  (* 0.2f (+ (+ (cell nbh 0 1) (cell nbh 1 0))
                             (+ (cell nbh 1 1) (+ (cell nbh 1 2) (cell nbh 2 1))))))
                nbhs))
         (slide2d #3 #1 g))))
