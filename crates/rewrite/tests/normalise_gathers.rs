//! The normalisations of index arithmetic and chunked reductions that the forms of
//! `bench/forms/` written with explicit indices need (`normalise_index`'s column gather, the
//! two-level reduction of mapped chunks), each on at least two formulations of its pattern:
//! they normalise to the program written with `transpose` and `zip`, and that program's
//! variants are the ones exploration ranks.

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

fn same_normal_form(a: &str, b: &str) {
    assert_eq!(normal(a), normal(b), "\n{a}\n{b}");
}

const M: &str = "(lift (M N) ((array-type (array-type float N) M)) (lambda (m) ";

#[test]
fn a_column_read_at_an_index_of_every_row_is_a_column_of_the_transpose() {
    let copy = format!("{M}(map (lambda (c) (map (lambda (x) x) c)) (transpose m))))");
    // column j gathered from the rows
    same_normal_form(
        &format!("{M}(map (lambda (j) (map (lambda (row) (at j row)) m)) (generate N (lambda (j) j)))))"),
        &copy,
    );
    // both indices explicit
    same_normal_form(
        &format!(
            "{M}(map (lambda (j) (map (lambda (i) (at j (at i m))) (generate M (lambda (i) i)))) \
             (generate N (lambda (j) j)))))"
        ),
        &copy,
    );
    // an element-wise function of the column
    same_normal_form(
        &format!("{M}(map (lambda (j) (map (lambda (row) (* 2.0f (at j row))) m)) (generate N (lambda (j) j)))))"),
        &format!("{M}(map (lambda (c) (map (lambda (x) (* 2.0f x)) c)) (transpose m))))"),
    );
    // a row read elsewhere than at j is not a column
    let mixed =
        format!("{M}(map (lambda (j) (map (lambda (row) (+ (at j row) (at 0 row))) m)) (generate N (lambda (j) j)))))");
    assert!(!normal(&mixed).contains("transpose"), "{}", normal(&mixed));
}

#[test]
fn a_component_of_a_zip_read_at_an_index_is_a_column_of_its_transpose() {
    let gemv_t = "(lift (M N) ((array-type (array-type float N) M) (array-type float M)) (lambda (a x) ";
    let dot_col = "(at 0 (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip c x))))";
    let transposed = format!("{gemv_t}(map (lambda (c) {dot_col}) (transpose a))))");
    same_normal_form(
        &format!(
            "{gemv_t}(map (lambda (j) (at 0 (reduce + 0.0f (map (lambda (rx) (* (at j (get #0 rx)) (get #1 rx))) \
             (zip a x))))) (generate N (lambda (j) j)))))"
        ),
        &transposed,
    );
    // the product with three index arrays is the product with the columns of B
    let mm = "(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K)) (lambda (A B) ";
    same_normal_form(
        &format!(
            "{mm}(map (lambda (i) (map (lambda (j) (at 0 (reduce + 0.0f (map (lambda (k) (* (at k (at i A)) \
             (at j (at k B)))) (generate K (lambda (k) k)))))) (generate N (lambda (j) j)))) \
             (generate M (lambda (i) i)))))"
        ),
        &format!(
            "{mm}(map (lambda (arow) (map (lambda (bcol) (at 0 (reduce + 0.0f (map (lambda (p) \
             (* (get #0 p) (get #1 p))) (zip arow bcol))))) (transpose B))) A)))"
        ),
    );
}

#[test]
fn three_arrays_read_at_an_index_are_a_zip_of_three() {
    let v3 = "(lift (N) ((array-type float N) (array-type float N) (array-type float N)) (lambda (a b c) ";
    same_normal_form(
        &format!("{v3}(map (lambda (i) (+ (at i a) (* (at i b) (at i c)))) (generate N (lambda (i) i)))))"),
        &format!("{v3}(map (lambda (t) (+ (get #0 t) (* (get #1 t) (get #2 t)))) (zip a b c))))"),
    );
    same_normal_form(
        &format!("{v3}(map (lambda (i) (* (at i c) (- (at i b) (at i a)))) (generate N (lambda (i) i)))))"),
        &format!("{v3}(map (lambda (t) (* (get #0 t) (- (get #1 t) (get #2 t)))) (zip c b a))))"),
    );
}

#[test]
fn two_level_reductions_of_mapped_chunks_are_one_reduction_of_the_map() {
    let vec = "(lift (N) ((array-type float N) (array-type float N)) (lambda (xs ys) ";
    let prod = "(map (lambda (p) (* (get #0 p) (get #1 p)))";
    let flat = format!("{vec}(reduce + 0.0f {prod} (zip xs ys)))))");
    same_normal_form(
        &format!("{vec}(reduce + 0.0f (join (map (lambda (c) (reduce + 0.0f {prod} c))) (split #64 (zip xs ys)))))))"),
        &flat,
    );
    // the rows of a matrix-vector product, chunks of 4, the outer sum with a commuted operator
    let mv = "(lift (M N) ((array-type (array-type float N) M) (array-type float N)) (lambda (a x) ";
    same_normal_form(
        &format!(
            "{mv}(join (map (lambda (r) (reduce (lambda (u v) (+ v u)) 0.0f (join (map (lambda (c) \
             (reduce + 0.0f {prod} c))) (split #4 (zip r x)))))) a))))"
        ),
        &format!("{mv}(join (map (lambda (r) (reduce + 0.0f {prod} (zip r x)))) a))))"),
    );
    // a chunk's function that reads the chunk itself is not an element-wise map
    let reads = format!(
        "{vec}(reduce + 0.0f (join (map (lambda (c) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #0 (at 0 c)))) c))) \
         (split #64 (zip xs ys)))))))"
    );
    assert!(normal(&reads).contains("split"), "{}", normal(&reads));
}

#[test]
fn a_view_as_the_result_is_its_copy() {
    let copy = format!("{M}(map (lambda (c) (map (lambda (x) x) c)) (transpose m))))");
    same_normal_form(&format!("{M}(transpose m)))"), &copy);
    same_normal_form(&format!("{M}(let t (transpose m) t)))"), &copy);
    let v = "(lift (N) ((array-type float N)) (lambda (xs) ";
    same_normal_form(
        &format!("{v}(split #4 xs)))"),
        &format!("{v}(map (lambda (c) (map (lambda (x) x) c)) (split #4 xs))))"),
    );
    // a parameter itself, and a view of tuples, stay
    assert_eq!(normal(&format!("{M}m))")), "m");
    let pairs = "(lift (N) ((array-type float N) (array-type float N)) (lambda (a b) (zip a b)))";
    assert_eq!(normal(pairs), "(zip a b)");
}
