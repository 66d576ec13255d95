//! `normalise_arrays`' rows scaled by a scalar computed from each (atax as PolyBench's loop
//! writes it), on at least two formulations: the scalars become a vector of their own and the
//! sum of the scaled rows a reduction a column, the program written with `transpose`.

use rewrite::{encode, normalise};

fn typed(src: &str) -> (ir::Program, typeck::TypeInfo) {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    (prog, info)
}

/// The program as exploration sees it, its binders named canonically.
fn normal(src: &str) -> String {
    let (prog, info) = typed(src);
    let (prog, _) = normalise::normalise(&prog, &info).unwrap_or((prog, info));
    encode::subtree_text(&prog, &encode::canonical_names(&prog), prog.body)
}

const ATAX: &str = "(define (vadd u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))\n\
                    (lift (M N) ((array-type (array-type float N) M) (array-type float N)) (lambda (A x) ";
const DOT: &str = "(at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row x))))";

#[test]
fn rows_scaled_by_their_own_dot_product_and_summed_are_a_product_with_the_transpose() {
    let transposed = format!(
        "{ATAX}(let tmp (join (map (lambda (row) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row x)))) A)) \
         (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip col tmp)))) (transpose A))))))"
    );
    let zeros = "(map (lambda (v) 0.0f) x)";
    let forms = [
        // the scalar bound with let
        format!(
            "{ATAX}(at 0 (reduce vadd {zeros} (map (lambda (row) (let t {DOT} (map (lambda (a) (* a t)) row))) A)))))"
        ),
        // scaled by a definition (the reader binds its arguments with let), the sum's zeros a
        // map over the rows' length
        format!(
            "(define (scale s v) (map (lambda (a) (* a s)) v))\n{ATAX}(at 0 (reduce vadd (map (lambda (v) 0.0f) x) \
             (map (lambda (row) (scale {DOT} row)) A)))))"
        ),
    ];
    for f in &forms {
        assert_eq!(normal(f), normal(&transposed), "\n{f}");
    }
    // the product the other way round: the same column form
    let commuted = format!(
        "{ATAX}(at 0 (reduce vadd {zeros} (map (lambda (row) (let t {DOT} (map (lambda (a) (* t a)) row))) A)))))"
    );
    assert!(normal(&commuted).contains("(transpose A)"), "{}", normal(&commuted));
    // a row scaled by a scalar that is not a one-element reduction of it stays as written
    let other =
        format!("{ATAX}(at 0 (reduce vadd {zeros} (map (lambda (row) (map (lambda (a) (* a (at 0 row))) row)) A)))))");
    assert!(!normal(&other).contains("transpose"), "{}", normal(&other));
}
