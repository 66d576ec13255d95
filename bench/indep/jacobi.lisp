;; One step of a 2-D 5-point Jacobi relaxation over the interior of an (H+2) x (W+2) grid:
;; each output is the mean of its four neighbours and itself. The 3 x 3 windows are made
;; from windows of three rows, transposed into columns of three, then windows of three columns
;; (`w[c][r]`: column `c`, row `r` of the window).
(define (cell w r c) (at r (at c w)))
(lift
  (H W)
  ((array-type (array-type float (+ W 2)) (+ H 2)))
  (lambda (g)
    (map (lambda (rows)
           (map (lambda (w)
                  (* 0.2f (+ (+ (cell w 0 1) (cell w 1 0))
                             (+ (cell w 1 1) (+ (cell w 1 2) (cell w 2 1))))))
                (slide #3 #1 (transpose rows))))
         (slide #3 #1 g))))
