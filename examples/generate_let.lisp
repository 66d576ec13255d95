;; `generate` whose function binds names with `let`: element `i` of the generated array is
;; i/2 (integer division) plus 0.5 for odd `i`, minus 0.25 for even ones, multiplied with `xs`.
;; The function needs statements before its value, so the OpenCL back end makes it a C function
;; of the index, called where an element is read (here inside the mapGlb; nothing is stored).
;; data: generate_let.json
;; expect: [-0.25, 1.0, 2.25, 6.0, 8.75, 15.0, 19.25, 28.0]
(lift
  (N)
  ((array-type float N))
  (lambda (xs)
    (toGlobal
      (mapGlb (lambda (p) (* (get #0 p) (get #1 p)))
        (zip xs
          (generate N
            (lambda (i)
              (let h (to-float (/ i 2))
                (let odd (= (% i 2) 1)
                  (if odd (+ h 0.5f) (- h 0.25f)))))))))))
