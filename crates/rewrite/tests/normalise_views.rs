//! `normalise_views`: a view of a matrix built with maps of layout primitives that reads it
//! transposed is `transpose m` (and one that reads it as it is, `m`), on several formulations
//! of a tiled transpose; views that read it otherwise stay as written.

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

const MAT: &str = "(lift (M N) ((array-type (array-type float N) M)) (lambda (m) ";

fn program(body: &str) -> String {
    format!("{MAT}{body}))")
}

#[test]
fn tiles_transposed_in_a_grid_of_transposed_tiles_are_the_transpose() {
    let copy = normal(&program("(transpose m)"));
    // 8×8 tiles: the grid of tiles transposed, each tile transposed, joined back
    let grid = "(define (tiles xss) (map transpose (split #8 (map (split #8) xss))))\n";
    let tiled = format!(
        "{grid}{}",
        program("(join (map (lambda (col) (map join (transpose (map transpose col)))) (transpose (tiles m))))")
    );
    assert_eq!(normal(&tiled), copy);
    // 4×16 tiles written inline: rows of tiles first, each tile transposed, then the grid
    let rows_first = program(
        "(join (map (lambda (bc) (map join (transpose bc))) \
         (transpose (map (lambda (br) (map transpose (transpose (map (split #16) br)))) (split #4 m)))))",
    );
    assert_eq!(normal(&rows_first), copy);
}

#[test]
fn a_view_that_takes_tiles_apart_and_puts_them_back_is_the_matrix() {
    // rows split in chunks and joined again, under a map
    let src = program("(map (lambda (r) (join r)) (transpose (transpose (map (split #8) m))))");
    let as_is = normal(&src);
    assert!(!as_is.contains("split"), "{as_is}");
    let tiles =
        program("(join (map (lambda (bc) (map join (transpose bc))) (map transpose (split #4 (map (split #16) m)))))");
    assert_eq!(normal(&tiles), as_is);
}

#[test]
fn a_view_of_tiles_that_is_not_a_transpose_stays_as_written() {
    // the tiles are transposed but the grid is not: a blocked layout, neither `m` nor its transpose
    let src = program("(join (map (lambda (col) (map join (transpose (map transpose col)))) (map transpose (split #8 (map (split #8) m)))))");
    let n = normal(&src);
    assert!(n.contains("split"), "{n}");
    // a square matrix read with its tiles' own transposes only
    let sq = "(lift (N) ((array-type (array-type float N) N)) (lambda (m) \
              (join (map (lambda (br) (map join (transpose (map transpose br)))) (split #8 (map (split #8) m))))))";
    assert!(normal(sq).contains("split"), "{}", normal(sq));
}

const IMG: &str = "(lift (H W) ((array-type (array-type float W) H) (array-type float 17)) (lambda (img ws) ";

#[test]
fn a_stencil_over_the_columns_of_a_transpose_is_a_stencil_over_windows_of_rows() {
    let dot = "(reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip win ws)))";
    // the column pass written as the row pass between two transposes
    let transposed = format!(
        "{IMG}(transpose (map (lambda (col) (join (map (lambda (win) {dot}) (slide #17 #1 (pad-clamp #8 #8 col))))) \
         (transpose img)))))"
    );
    // windows of 17 rows, each transposed into its columns, the dot taken `at 0`
    let rows = format!(
        "{IMG}(map (lambda (rows17) (map (lambda (win) (at 0 {dot})) (transpose rows17))) \
         (slide #17 #1 (pad-clamp #8 #8 img)))))"
    );
    assert_eq!(normal(&transposed), normal(&rows));
    assert!(
        !normal(&transposed).contains("transpose img"),
        "{}",
        normal(&transposed)
    );
}

#[test]
fn a_difference_down_the_columns_is_a_difference_of_rows() {
    let mat = "(lift (H W) ((array-type (array-type float W) H)) (lambda (img) ";
    let diff = "(lambda (w) (- (at 2 w) (at 0 w)))";
    let transposed =
        format!("{mat}(transpose (map (lambda (c) (map {diff} (slide #3 #1 (pad-clamp #1 #1 c)))) (transpose img)))))");
    let rows = format!("{mat}(map (lambda (r3) (map {diff} (transpose r3))) (slide #3 #1 (pad-clamp #1 #1 img)))))");
    assert_eq!(normal(&transposed), normal(&rows));
    // unpadded
    let transposed = format!("{mat}(transpose (map (lambda (c) (map {diff} (slide #3 #1 c))) (transpose img)))))");
    let rows = format!("{mat}(map (lambda (r3) (map {diff} (transpose r3))) (slide #3 #1 img))))");
    assert_eq!(normal(&transposed), normal(&rows));
    // a window function that reads its column stays between the transposes
    let reads_column = format!(
        "{mat}(transpose (map (lambda (c) (map (lambda (w) (- (at 2 w) (at 0 c))) (slide #3 #1 c))) (transpose img)))))"
    );
    assert!(
        normal(&reads_column).contains("(transpose (map"),
        "{}",
        normal(&reads_column)
    );
}

fn row_pass(window_fn: &str) -> String {
    format!(
        "{IMG}(map (lambda (row) (map (lambda (win) (at 0 (reduce + 0.0f {window_fn}))) \
         (slide #17 #1 (pad-clamp #8 #8 row)))) img)))"
    )
}

#[test]
fn taps_read_by_index_arithmetic_are_windows_of_a_slide() {
    let taps = "(generate #17 (lambda (k) k))";
    let slid = row_pass("(map (lambda (p) (* (get #0 p) (get #1 p))) (zip win ws))");
    // `at (+ j k)` of the padded row, the row bound with let
    let plus = format!(
        "{IMG}(map (lambda (row) (let padded (pad-clamp #8 #8 row) (map (lambda (j) (at 0 (reduce + 0.0f \
         (map (lambda (k) (* (at (+ j k) padded) (at k ws))) {taps})))) (generate W (lambda (j) j))))) img)))"
    );
    assert_eq!(normal(&plus), normal(&slid));
    // `(+ k j)`, the padded row inline
    let commuted = format!(
        "{IMG}(map (lambda (row) (map (lambda (j) (at 0 (reduce + 0.0f \
         (map (lambda (k) (* (at (+ k j) (pad-clamp #8 #8 row)) (at k ws))) {taps})))) (generate W (lambda (j) j)))) img)))"
    );
    assert_eq!(normal(&commuted), normal(&slid));
    // the column pass: windows of whole rows, read at their column
    let col = format!(
        "{IMG}(let padded (pad-clamp #8 #8 img) (map (lambda (i) (map (lambda (j) (at 0 (reduce + 0.0f \
         (map (lambda (k) (* (at k ws) (at j (at (+ i k) padded)))) {taps})))) (generate W (lambda (j) j)))) \
         (generate H (lambda (i) i))))))"
    );
    let n = normal(&col);
    assert!(
        n.contains("(slide #17 #1 (pad-clamp #8 #8 img))") && !n.contains("generate"),
        "{n}"
    );
}

#[test]
fn index_arithmetic_over_an_array_of_another_length_stays_as_written() {
    // unpadded: the row has W elements, not W + 16, so `at (+ j k) row` is not a window of it
    let src = format!(
        "{IMG}(map (lambda (row) (map (lambda (j) (at 0 (reduce + 0.0f \
         (map (lambda (k) (* (at (+ j k) row) (at k ws))) (generate #17 (lambda (k) k)))))) (generate W (lambda (j) j)))) img)))"
    );
    assert!(!normal(&src).contains("slide"), "{}", normal(&src));
}
