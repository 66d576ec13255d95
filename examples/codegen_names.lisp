;; User names that look like generated ones, C keywords or OpenCL built-ins (parameters, size
;; variables and lambda variables): the namer gives every C identifier its own spelling. The size
;; `rounded_launch` once took the name of the launch-rounding placeholder and lost its bounds guard.
;; data: codegen_names.json
;; expect: [[111.5, 112.5, 113.5], [115.0, 116.0, 117.0]]
(lift
  (max rounded_launch L0)
  ((array-type (array-type float rounded_launch) max) (array-type (array-type float rounded_launch) max) float int (array-type float L0))
  (lambda (gout v_x_1 float int X1)
    (toGlobal
      (mapGlb1
        (lambda (get_global_id)
          (mapGlb
            (lambda (v_gl_id_1)
              (let kernel (* (get #1 v_gl_id_1) float)
                (let max (+ (get #0 v_gl_id_1) kernel)
                  (+ max (+ (to-float int) (at 0 X1))))))
            (zip (get #0 get_global_id) (get #1 get_global_id))))
        (zip gout v_x_1)))))
