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

const GEMV_T: &str =
    "(lift (M N) ((array-type (array-type float N) M) (array-type float M)) (lambda (A x) (at 0 (reduce ";
const SCALED_ROWS: &str =
    "(map (lambda (v) 0.0f) (at 0 A)) (map (lambda (rx) (map (lambda (a) (* a (get #1 rx))) (get #0 rx))) (zip A x))))))";

#[test]
fn an_element_wise_reduction_over_rows_is_a_reduction_a_column() {
    let vadd = "(define (vadd u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))\n";
    let forms = [
        format!("{vadd}{GEMV_T}vadd {SCALED_ROWS}"),
        // inline, the zip's operands and the operator's swapped
        format!("{GEMV_T}(lambda (u v) (map (lambda (p) (+ (get #1 p) (get #0 p))) (zip v u))) {SCALED_ROWS}"),
    ];
    same_normal_form(&forms[0], &forms[1]);
    let columns = "(lift (M N) ((array-type (array-type float N) M) (array-type float M)) (lambda (A x) \
                   (join (map (lambda (c) (reduce (lambda (s t) (+ s t)) 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip c x)))) \
                   (transpose A)))))";
    same_normal_form(&forms[0], columns);
    let sizes = [("M", 1024), ("N", 1024)];
    for src in &forms {
        let d = chosen(src, &sizes);
        assert!(d.contains("column blocks"), "{d}\n{src}");
    }
    // a row of the result a row of `A` (mm): the sum of the rows of `B` scaled by the row
    let mm = |f: &str| {
        format!(
            "(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K)) (lambda (A B) \
             (join (map (lambda (arow) (reduce {f} (map (lambda (b) 0.0f) (at 0 B)) \
             (map (lambda (ab) (map (lambda (b) (* (get #0 ab) b)) (get #1 ab))) (zip arow B)))) A))))"
        )
    };
    let mm_forms = [
        mm("(lambda (u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v)))"),
        mm("(lambda (u v) (map (lambda (p) (+ (get #1 p) (get #0 p))) (zip u v)))"),
    ];
    same_normal_form(&mm_forms[0], &mm_forms[1]);
    assert!(normal(&mm_forms[0]).contains("transpose"), "{}", normal(&mm_forms[0]));
}

#[test]
fn an_accumulation_from_a_non_neutral_start_stays() {
    // side condition: the start an array of the operator's neutral element
    let src = format!(
        "{GEMV_T}(lambda (u v) (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip u v))) {}",
        SCALED_ROWS.replacen("0.0f", "1.0f", 1)
    );
    assert!(!normal(&src).contains("transpose"), "{}", normal(&src));
}

#[test]
fn a_map_over_an_index_array_is_a_map_over_the_arrays_it_reads() {
    let forms = [
        format!("{VEC}(reduce + 0.0f (map (lambda (i) (* (at i xs) (at i ys))) (generate N (lambda (i) i))))))"),
        format!("{VEC}(reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))"),
    ];
    same_normal_form(&forms[0], &forms[1]);
    // one array, read under a lambda of the body
    let one = [
        "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (i) (let s (at i xs) (* s s))) (generate N (lambda (i) i)))))",
        "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (e) (let s e (* s s))) xs)))",
    ];
    same_normal_form(one[0], one[1]);
    let sizes = [("N", 1 << 20)];
    let d = chosen(&forms[0], &sizes);
    assert!(d.contains("one launch"), "{d}");
}

#[test]
fn an_index_used_as_a_value_or_of_another_length_stays() {
    // side condition: every use of the index is an `at` of an array of the generate's length
    let value = format!("{VEC}(map (lambda (i) (+ (at i xs) (to-float i))) (generate N (lambda (i) i)))))");
    let other =
        "(lift (N M) ((array-type float M)) (lambda (xs) (map (lambda (i) (at i xs)) (generate N (lambda (i) i)))))";
    for src in [value.as_str(), other] {
        assert!(normal(src).contains("generate"), "{}", normal(src));
    }
}

#[test]
fn a_reduction_over_strided_partial_reductions_is_the_flat_reduction() {
    let sum = "(lift (N) ((array-type float N)) (lambda (xs) ";
    let forms = [
        format!("{sum}(o (reduce + 0.0f) join (map (reduce + 0.0f)) transpose (split #256) xs)))"),
        format!(
            "{sum}(reduce (lambda (a b) (+ b a)) 0.0f (join (map (lambda (c) (reduce + 0.0f c)) (transpose (split #64 xs)))))))"
        ),
        format!("{sum}(reduce + 0.0f xs)))"),
    ];
    same_normal_form(&forms[0], &forms[2]);
    same_normal_form(&forms[1], &forms[2]);
    let max = format!("{sum}(reduce max 1.0f (join (map (reduce max 1.0f) (transpose (split #8 xs)))))))");
    assert!(!normal(&max).contains("transpose"), "{}", normal(&max));
    let d = chosen(&forms[0], &[("N", 1 << 20)]);
    assert!(d.contains("one launch"), "{d}");
}

#[test]
fn strided_partial_reductions_of_another_start_stay() {
    // side condition: the neutral element of `+`
    let src = "(lift (N) ((array-type float N)) (lambda (xs) \
               (reduce + 1.0f (join (map (reduce + 1.0f) (transpose (split #8 xs)))))))";
    assert!(normal(src).contains("transpose"), "{}", normal(src));
}
