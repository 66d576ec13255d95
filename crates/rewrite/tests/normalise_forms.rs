//! The normalisations for the formulations of `bench/forms/` that found no parallel variant
//! (`normalise_scalar`, …), each on at least two formulations of its pattern: they normalise to
//! one program (up to the names of binders), and exploration finds the fast variant for each.

use rewrite::{encode, explore, normalise, Options};

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

fn same_normal_form(a: &str, b: &str) {
    assert_eq!(normal(a), normal(b), "\n{a}\n{b}");
}

/// The description of the cost model's choice at these sizes.
fn chosen(src: &str, sizes: &[(&str, i64)]) -> String {
    let (prog, info) = typed(src);
    let opts = Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    ex.variants[0].description.clone()
}

const VEC: &str = "(lift (N) ((array-type float N) (array-type float N)) (lambda (xs ys) ";

#[test]
fn a_scalar_result_from_a_one_element_reduction_is_a_reduction_read_once() {
    let sum = "(reduce (lambda (a b) (+ a b)) 0.0f xs)";
    let commuted = "(reduce (lambda (a b) (+ b a)) 0.0f xs)";
    let forms = [
        format!("{VEC}(at 0 {commuted})))"),
        format!("{VEC}(let s (at 0 {sum}) s)))"),
    ];
    same_normal_form(&forms[0], &forms[1]);
    let dot = "(reduce (lambda (a b) (+ b a)) 0.0f (map (lambda (p) (* (get #1 p) (get #0 p))) (zip ys xs)))";
    let scaled = [
        format!("{VEC}(* 2.0f (at 0 {sum}))))"),
        format!("{VEC}(let s (at 0 {sum}) (* 2.0f s))))"),
        format!("{VEC}(at 0 (map (lambda (s) (* 2.0f s)) {sum}))))"),
    ];
    same_normal_form(&scaled[0], &scaled[1]);
    same_normal_form(&scaled[0], &scaled[2]);
    let sizes = [("N", 1 << 20)];
    for src in forms
        .iter()
        .chain(&scaled)
        .chain([&format!("{VEC}(let s (at 0 {dot}) s)))")])
    {
        assert!(normal(src).contains("(let "), "{}", normal(src));
        let d = chosen(src, &sizes);
        assert!(d.contains("one launch"), "{d}\n{src}");
    }
}

#[test]
fn a_scalar_result_mixing_two_reductions_is_explored_as_written() {
    // side condition: one reduction (the map over its one element computes the rest once)
    let src = format!("{VEC}(+ (at 0 (reduce + 0.0f xs)) (at 0 (reduce + 0.0f ys)))))");
    assert!(!normal(&src).contains("(let "), "{}", normal(&src));
}
