//! Each equality of `rewrite::normalise`, and each rule the forms need, on at least two
//! formulations of its pattern: both normalise to one program (up to the names of binders),
//! and the rule matches both.

use rewrite::{encode, normalise, Options};

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

const DOT: &str = "(define (dot xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys))))\n";
const DOT_AT: &str =
    "(define (dot xs ys) (at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))\n";
const MV: &str = "(lift (M N) ((array-type (array-type float N) M) (array-type float N)) (lambda (a x) ";

#[test]
fn let_bound_views_and_single_uses_are_inlined() {
    let bound = format!(
        "{MV}(join (map (lambda (r) (let k (zip r x) (let s (map (lambda (p) (* (get #0 p) (get #1 p))) k) \
         (reduce + 0.0f s)))) a))))"
    );
    let inline = format!(
        "{MV}(join (map (lambda (r) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip r x)))) a))))"
    );
    same_normal_form(&bound, &inline);
    // through a definition (the reader binds its arguments with `let`)
    same_normal_form(&format!("{DOT}{MV}(join (map (lambda (r) (dot r x)) a))))"), &inline);
}

#[test]
fn a_let_read_inside_a_map_stays_a_value_of_its_own() {
    // `tmp` is computed once, then read by every column: inlining it would compute it per column
    let src = format!("{DOT}{MV}(let tmp (join (map (lambda (r) (dot r x)) a)) (join (map (lambda (c) (dot c tmp)) (transpose a))))))");
    assert!(normal(&src).contains("(let "), "{}", normal(&src));
}

#[test]
fn at_0_of_a_reduction_is_its_element() {
    // one dot product a row
    same_normal_form(
        &format!("{DOT_AT}{MV}(map (lambda (r) (dot r x)) a)))"),
        &format!("{DOT}{MV}(join (map (lambda (r) (dot r x)) a))))"),
    );
    // used in scalar arithmetic
    same_normal_form(
        &format!("{DOT_AT}{MV}(map (lambda (r) (* 2.0f (dot r x))) a)))"),
        &format!("{DOT}{MV}(join (map (lambda (r) (map (lambda (s) (* 2.0f s)) (dot r x))) a))))"),
    );
    // two of them, as gesummv
    let two =
        "(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N)) \
               (lambda (a b x) ";
    same_normal_form(
        &format!("{DOT_AT}{two}(map (lambda (rs) (+ (dot (get #0 rs) x) (dot (get #1 rs) x))) (zip a b))))"),
        &format!(
            "{DOT}{two}(join (map (lambda (rs) (map (lambda (s) (+ (get #0 s) (get #1 s))) \
             (zip (dot (get #0 rs) x) (dot (get #1 rs) x)))) (zip a b)))))"
        ),
    );
    // `at 0` of a map of the reduction
    same_normal_form(
        &format!("{MV}(map (lambda (r) (at 0 (map (lambda (s) (* s s)) (reduce + 0.0f r)))) a)))"),
        &format!("{MV}(join (map (lambda (r) (map (lambda (s) (* s s)) (reduce + 0.0f r))) a))))"),
    );
}

#[test]
fn at_0_of_a_reduction_reading_the_lets_a_body_starts_with_is_mapped_inside_them() {
    let centred = "(let c (at 0 r) (at 0 (reduce + 0.0f (map (lambda (v) (* (- v c) (- v c))) r))))";
    same_normal_form(
        &format!("{MV}(map (lambda (r) {centred}) a)))"),
        &format!(
            "{MV}(join (map (lambda (r) (let c (at 0 r) (reduce + 0.0f (map (lambda (v) (* (- v c) (- v c))) r)))) a))))"
        ),
    );
    // a `let` inside the arithmetic, not around it: the reduction cannot leave the row function
    let inside = format!("{MV}(map (lambda (r) (+ 1.0f {centred})) a)))");
    assert!(!normal(&inside).contains("(join"), "{}", normal(&inside));
}

const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) ";

#[test]
fn two_level_reductions_are_one_reduction() {
    let flat = format!("{SUM}(reduce + 0.0f xs)))");
    same_normal_form(
        &format!("{SUM}(reduce + 0.0f (join (map (lambda (c) (reduce + 0.0f c)) (split #1024 xs))))))"),
        &flat,
    );
    same_normal_form(
        &format!(
            "{SUM}(reduce (lambda (a b) (+ b a)) 0.0f (join (map (lambda (c) (reduce + 0.0f c)) (split #64 xs))))))"
        ),
        &flat,
    );
    let max = format!("{SUM}(reduce max -1.0f xs)))");
    same_normal_form(
        &format!("{SUM}(reduce max -1.0f (join (map (lambda (c) (reduce max -1.0f c)) (split #16 xs))))))"),
        &max,
    );
    // not neutral: 1 + 1 per chunk is not 1 + the sum
    let ones = format!("{SUM}(reduce + 1.0f (join (map (lambda (c) (reduce + 1.0f c)) (split #16 xs))))))");
    assert!(normal(&ones).contains("split"), "{}", normal(&ones));
}

#[test]
fn commuted_operator_lambdas_are_their_operator() {
    same_normal_form(
        &format!("{SUM}(reduce (lambda (a b) (+ b a)) 0.0f xs)))"),
        &format!("{SUM}(reduce + 0.0f xs)))"),
    );
    same_normal_form(
        &format!("{SUM}(reduce (lambda (a b) (* b a)) 1.0f xs)))"),
        &format!("{SUM}(reduce (lambda (u v) (* u v)) 1.0f xs)))"),
    );
}

#[test]
fn identity_maps_of_computed_values_disappear_and_host_maps_of_reductions_are_bound() {
    same_normal_form(
        &format!("{SUM}(map (lambda (s) s) (reduce + 0.0f xs))))"),
        &format!("{SUM}(reduce + 0.0f xs)))"),
    );
    same_normal_form(
        &format!("{SUM}(map (lambda (s) (* 2.0f s)) (reduce + 0.0f xs))))"),
        &format!("{SUM}(let r (reduce + 0.0f xs) (map (lambda (s) (* 2.0f s)) r))))"),
    );
    // a copy of a view is what the program asks for
    let copy = "(lift (M N) ((array-type (array-type float N) M)) (lambda (m) (map (lambda (r) (map (lambda (x) x) r)) (transpose m))))";
    assert!(normal(copy).contains("(map "), "{}", normal(copy));
}

#[test]
fn transpose_of_a_transpose_is_the_matrix() {
    let m = "(lift (M N) ((array-type (array-type float N) M)) (lambda (m) ";
    same_normal_form(
        &format!("{m}(map (lambda (r) (map (lambda (x) (* x x)) r)) (transpose (transpose m)))))"),
        &format!("{m}(map (lambda (r) (map (lambda (x) (* x x)) r)) m)))"),
    );
}

/// How often the rules leave `pattern` in the e-graph of `src`, normalised first as `explore`
/// normalises.
fn matches(src: &str, sizes: &[(&str, i64)], pattern: &str) -> usize {
    let (prog, info) = typed(src);
    let (prog, info) = normalise::normalise(&prog, &info).unwrap_or((prog, info));
    let opts = Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..Options::default()
    };
    let (eg, ..) = rewrite::saturate(&prog, &info, &opts);
    rewrite::egraph::count_matches(&eg, pattern)
}

#[test]
fn column_blocks_match_either_operand_order_of_the_dot_product() {
    let mvt = "(lift (M N) ((array-type (array-type float N) M) (array-type float M)) (lambda (a x) ";
    let sizes = [("M", 1024), ("N", 1024)];
    for body in ["(dot c x)", "(dot x c)"] {
        for (def, wrap) in [(DOT, ("(join ", ")")), (DOT_AT, ("", ""))] {
            let src = format!(
                "{def}{mvt}{}(map (lambda (c) {body}) (transpose a)){}))",
                wrap.0, wrap.1
            );
            assert!(matches(&src, &sizes, "(colreduce ?bc ?r ?g ?f ?xs)") > 0, "{src}");
        }
    }
}

#[test]
fn work_group_reductions_match_dot_products_taken_at_0_or_mapped() {
    let sizes = [("M", 1024), ("N", 1024)];
    for src in [
        format!("{DOT_AT}{MV}(map (lambda (r) (dot r x)) a)))"),
        format!("{DOT}{MV}(join (map (lambda (r) (dot r x)) a))))"),
        format!("{DOT}{MV}(join (map (lambda (r) (let d (dot x r) (map (lambda (s) (* s s)) d))) a))))"),
    ] {
        assert!(matches(&src, &sizes, "(wgreduce ?s ?f ?z ?x)") > 0, "{src}");
    }
}

#[test]
fn whole_array_reductions_match_every_spelling_of_a_sum() {
    let sizes = [("N", 1 << 20)];
    for body in [
        "(reduce + 0.0f xs)",
        "(map (lambda (s) s) (reduce (lambda (a b) (+ b a)) 0.0f xs))",
        "(reduce + 0.0f (join (map (lambda (c) (reduce + 0.0f c)) (split #1024 xs))))",
    ] {
        let src = format!("{SUM}{body}))");
        assert!(matches(&src, &sizes, "(gridreduce ?g ?s ?f ?z ?x)") > 0, "{src}");
    }
}
