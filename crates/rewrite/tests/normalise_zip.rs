//! `normalise_zip`: a map over a zip of mapped arrays is one map over the arrays they map, on
//! at least two formulations of each case (coordinates unzipped then zipped, a vector of dot
//! products bound with `let` then zipped, rows of gathered elements zipped with their owner).

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

const PTS: &str = "(lift (N) ((array-type (tuple-type float float) N) float) (lambda (pts s) ";

#[test]
fn a_zip_of_two_maps_of_one_array_is_a_map_over_the_array() {
    let direct = format!("{PTS}(map (lambda (p) (+ (* s (get #0 p)) (get #1 p))) pts)))");
    // unzipped with let, then zipped
    same_normal_form(
        &format!(
            "{PTS}(let xs (map (lambda (p) (get #0 p)) pts) (let ys (map (lambda (p) (get #1 p)) pts) \
             (map (lambda (xy) (+ (* s (get #0 xy)) (get #1 xy))) (zip xs ys))))))"
        ),
        &direct,
    );
    // inline, the zip the other way round
    same_normal_form(
        &format!(
            "{PTS}(map (lambda (yx) (+ (* s (get #1 yx)) (get #0 yx))) \
             (zip (map (lambda (q) (get #1 q)) pts) (map (lambda (q) (get #0 q)) pts)))))"
        ),
        &direct,
    );
    // a component read twice stays an array of its own (it would be computed twice)
    let twice = format!(
        "{PTS}(map (lambda (xy) (* (get #0 xy) (+ (get #0 xy) (get #1 xy)))) \
         (zip (map (lambda (p) (* s (get #0 p))) pts) (map (lambda (p) (get #1 p)) pts)))))"
    );
    assert!(normal(&twice).contains("zip"), "{}", normal(&twice));
}

#[test]
fn a_vector_of_dot_products_zipped_with_another_is_read_where_it_is_used() {
    let gemv = "(lift (M N) ((array-type (array-type float N) M) (array-type float N) (array-type float M) float) \
                (lambda (a x y beta) ";
    let dot = "(reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip r x)))";
    let at0 =
        format!("{gemv}(map (lambda (ry) (let r (get #0 ry) (+ (at 0 {dot}) (* beta (get #1 ry))))) (zip a y))))");
    // the products bound with let, then zipped with y
    same_normal_form(
        &format!(
            "{gemv}(let ax (join (map (lambda (r) {dot}) a)) \
             (map (lambda (p) (+ (get #0 p) (* beta (get #1 p)))) (zip ax y)))))"
        ),
        &at0,
    );
    // the products taken `at 0` in a map, zipped inline
    same_normal_form(
        &format!(
            "{gemv}(map (lambda (p) (+ (get #0 p) (* beta (get #1 p)))) (zip (map (lambda (r) (at 0 {dot})) a) y))))"
        ),
        &at0,
    );
}

#[test]
fn rows_gathered_first_and_zipped_with_their_owner_are_gathered_where_they_are_read() {
    let md = "(lift (N M) ((array-type float N) (array-type (array-type int M) N)) (lambda (pos neigh) ";
    let force = "(reduce + 0.0f (map (lambda (pj) (- pi pj)) ";
    let direct = format!(
        "{md}(map (lambda (u) (let pi (get #1 u) (at 0 {force}(map (lambda (j) (at j pos)) (get #0 u))))))) (zip neigh pos))))"
    );
    same_normal_form(
        &format!(
            "{md}(let npos (map (lambda (row) (map (lambda (j) (at j pos)) row)) neigh) \
             (map (lambda (np) (let pi (get #1 np) (at 0 {force}(get #0 np)))))) (zip npos pos)))))"
        ),
        &direct,
    );
    same_normal_form(
        &format!(
            "{md}(map (lambda (pn) (let pi (get #0 pn) (at 0 {force}(get #1 pn)))))) \
             (zip pos (map (lambda (row) (map (lambda (j) (at j pos)) row)) neigh)))))"
        ),
        // zip operand order is kept: the direct form over `zip pos neigh`
        &format!(
            "{md}(map (lambda (u) (let pi (get #0 u) (at 0 {force}(map (lambda (j) (at j pos)) (get #1 u))))))) (zip pos neigh))))"
        ),
    );
}

#[test]
fn a_reduction_of_a_zip_of_maps_reduces_one_map_over_the_arrays() {
    let vecs = "(lift (N) ((array-type float N) (array-type int N)) (lambda (xs ks) ";
    // the smallest square and its index, the lower index kept on ties
    let argmin = "(lambda (a b) (if (<= (get #0 a) (get #0 b)) a b)) (tuple 3.0e38f -1)";
    let fused = format!(
        "{vecs}(reduce {argmin} (map (lambda (p) (tuple (* (get #0 p) (get #0 p)) (get #1 p))) (zip xs ks)))))"
    );
    // the squares zipped with the indices inline
    same_normal_form(
        &format!("{vecs}(reduce {argmin} (zip (map (lambda (x) (* x x)) xs) ks))))"),
        &fused,
    );
    // the squares bound with let
    same_normal_form(
        &format!("{vecs}(let sq (map (lambda (x) (* x x)) xs) (reduce {argmin} (zip sq ks)))))"),
        &fused,
    );
    // nothing mapped: the zip stays as written
    let plain = format!("{vecs}(reduce {argmin} (zip xs ks))))");
    assert!(!normal(&plain).contains("(map"), "{}", normal(&plain));
}

#[test]
fn distances_zipped_with_their_index_are_reduced_as_they_are_computed() {
    let km = "(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C)) \
              (lambda (points clusters) (map (lambda (pt) (get #1 (at 0 (reduce \
              (lambda (a b) (if (< (get #0 b) (get #0 a)) b a)) (tuple 3.0e38f 0) ";
    let dist = "(reduce + 0.0f (map (lambda (q) (let d (- (get #0 q) (get #1 q)) (* d d))) (zip pt c)))";
    let idx = "(generate C (lambda (i) i))";
    // each distance taken `at 0` in a map
    let at0 = format!("{km}(zip (map (lambda (c) (at 0 {dist})) clusters) {idx}))))) points)))");
    // the distances joined, bound with let inside the point's function
    let joined = format!(
        "(lift (P F C) ((array-type (array-type float F) P) (array-type (array-type float F) C)) \
         (lambda (points clusters) (map (lambda (pt) (let ds (join (map (lambda (c) {dist}) clusters)) \
         (get #1 (at 0 (reduce (lambda (a b) (if (< (get #0 b) (get #0 a)) b a)) (tuple 3.0e38f 0) \
         (zip ds {idx})))))) points)))"
    );
    same_normal_form(&at0, &joined);
    // no zip of a computed array is left: each distance is reduced where it is computed
    assert!(!normal(&at0).contains("(zip (join"), "{}", normal(&at0));
    let (prog, info) = typed(&at0);
    let opts = rewrite::Options {
        sizes: [("P", 819200), ("F", 34), ("C", 5)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{}", d.message));
    let d = &ex.variants[0].description;
    assert!(d.contains("reduce∘join fused"), "{d}");
}

#[test]
fn components_taken_apart_and_zipped_back_are_read_in_place() {
    let nb = "(lift (N) ((array-type (vector-type float 4) N)) (lambda (pos) (map (lambda (pi) (at 0 (reduce + 0.0f ";
    // the masses (w lanes) split off with let, zipped back with the positions inside the map
    let split = "(lift (N) ((array-type (vector-type float 4) N)) (lambda (pos) (let ms (map (lambda (p) (vget #3 p)) pos) \
         (map (lambda (pi) (at 0 (reduce + 0.0f (map (lambda (pm) (* (get #1 pm) (- (vget #0 (get #0 pm)) (vget #0 pi)))) \
         (zip pos ms))))) pos))))";
    let direct = format!("{nb}(map (lambda (q) (* (vget #3 q) (- (vget #0 q) (vget #0 pi)))) pos)))) pos)))");
    same_normal_form(split, &direct);
    // tuple components: the weights of weighted points
    let wp = "(lift (N) ((array-type (tuple-type float float) N)) (lambda (pts) ";
    let split = format!(
        "{wp}(let ws (map (lambda (p) (get #1 p)) pts) (map (lambda (p) (at 0 (reduce + 0.0f \
         (map (lambda (q) (* (get #1 q) (get #0 (get #0 q)))) (zip pts ws))))) pts))))"
    );
    let direct =
        format!("{wp}(map (lambda (p) (at 0 (reduce + 0.0f (map (lambda (q) (* (get #1 q) (get #0 q))) pts)))) pts)))");
    same_normal_form(&split, &direct);
    // a computed array (not components) read inside a lambda stays bound
    let computed = format!(
        "{wp}(let ws (map (lambda (p) (* (get #1 p) (get #1 p))) pts) (map (lambda (p) (at 0 (reduce + 0.0f \
         (map (lambda (q) (* (get #1 q) (get #0 (get #0 q)))) (zip pts ws))))) pts))))"
    );
    assert!(normal(&computed).contains("(let "), "{}", normal(&computed));
}
