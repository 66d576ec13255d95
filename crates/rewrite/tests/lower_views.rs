//! Lowering of a kernel's argument that is a view of computed arrays (`slide (pad-clamp
//! rows)` of a first pass, a `zip` of two mapped arrays, a `let` of such a view): the arrays are
//! kernels of their own and the view is read where it is used, never stored by one work-item.
//! Each on at least two formulations; the check is the plan's launches.

use rewrite::{explore, Options};

/// The global sizes of the kernels of the cost model's choice at these sizes.
fn launches(src: &str, sizes: &[(&str, i64)], normalise: bool) -> Vec<Vec<arith::ArithExpr>> {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let opts = Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        normalise,
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let v = &ex.variants[0];
    let plan = codegen_opencl::emit(&v.program, &v.info).unwrap_or_else(|d| panic!("{}\n{}", d.message, v.source));
    plan.kernels.iter().map(|k| k.global.clone()).collect()
}

fn no_single_work_item(src: &str, sizes: &[(&str, i64)], normalise: bool) {
    let ls = launches(src, sizes, normalise);
    assert!(ls.len() >= 2, "{src}: {ls:?}");
    for g in &ls {
        assert!(
            g.iter().any(|d| !d.is_cst(1)),
            "{src}: a kernel of one work-item: {ls:?}"
        );
    }
}

const IMG: &str = "(lift (H W) ((array-type (array-type float W) H) (array-type float 3)) (lambda (img w) ";
const ROW: &str = "(map (lambda (row) (join (map (lambda (win) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip w win)))) (slide #3 #1 (pad-clamp #1 #1 row))))) img)";

#[test]
fn a_slide_of_a_first_pass_is_read_by_the_second_pass_where_it_is_used() {
    let sizes = [("H", 512), ("W", 512)];
    // the column pass over windows of rows of the row pass
    no_single_work_item(
        &format!(
            "{IMG}(map (lambda (rows) (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) \
             (zip col w)))) (transpose rows)))) (slide #3 #1 (pad-clamp #1 #1 {ROW})))))"
        ),
        &sizes,
        true,
    );
    // the row pass bound with let, padded in a let of its own
    no_single_work_item(
        &format!(
            "{IMG}(let t {ROW} (let pt (pad-clamp #1 #1 t) (map (lambda (rows) (join (map (lambda (col) (reduce + 0.0f \
             (map (lambda (p) (* (get #0 p) (get #1 p))) (zip w col)))) (transpose rows)))) (slide #3 #1 pt))))))"
        ),
        &sizes,
        true,
    );
}

#[test]
fn a_zip_of_two_computed_arrays_is_read_by_the_kernel_that_uses_it() {
    // as written (normalisation off, which would fuse the maps into the zip's consumer)
    let pts = "(lift (N) ((array-type (tuple-type float float) N)) (lambda (pts) ";
    let sizes = [("N", 1 << 20)];
    no_single_work_item(
        &format!(
            "{pts}(map (lambda (xy) (+ (get #0 xy) (get #1 xy))) (zip (map (lambda (p) (* 2.0f (get #0 p))) pts) \
             (map (lambda (p) (* 3.0f (get #1 p))) pts)))))"
        ),
        &sizes,
        false,
    );
    let two = "(lift (N) ((array-type float N) (array-type float N)) (lambda (a b) ";
    no_single_work_item(
        &format!(
            "{two}(map (lambda (q) (* (get #0 q) (get #1 q))) (zip (map (lambda (x) (+ x 1.0f)) a) (map (lambda (y) (* y y)) b)))))"
        ),
        &sizes,
        false,
    );
}
