use crate::{validate, validate_with};
use std::collections::BTreeMap;

/// The messages `validate` gives for a program (empty when it is accepted), each with the source
/// text its span covers.
fn check(src: &str) -> Vec<(String, String)> {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("parse: {}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("types: {}\n{src}", d.message));
    match validate(&prog, &info) {
        Ok(()) => vec![],
        Err(ds) => ds
            .into_iter()
            .map(|d| (d.message, src[d.span.start as usize..d.span.end as usize].to_string()))
            .collect(),
    }
}

fn one_error(src: &str, want: &str, at: &str) {
    let errs = check(src);
    assert_eq!(errs.len(), 1, "{errs:?}\n{src}");
    assert!(errs[0].0.contains(want), "{errs:?}\n{src}");
    assert!(errs[0].1.starts_with(at), "span {:?}, want `{at}`", errs[0].1);
}

fn prog(sizes: &str, tys: &str, params: &str, body: &str) -> String {
    format!("(lift ({sizes}) ({tys}) (lambda ({params}) {body}))")
}

fn vec1(body: &str) -> String {
    prog("N", "(array-type float N)", "xs", body)
}

fn mat(body: &str) -> String {
    prog("N M", "(array-type (array-type float M) N)", "xs", body)
}

/// Examples that validate only after `rewrite::split_tuple_lets`, which `lift_compile` applies
/// before validation (the crate `lift` runs them through the whole pipeline).
const SPLIT_BEFORE_VALIDATION: &[&str] = &["filter_tuple_let.lisp"];

#[test]
fn every_example_passes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "lisp") {
            continue;
        }
        let src = std::fs::read_to_string(&path).expect("read");
        let name = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        if SPLIT_BEFORE_VALIDATION.contains(&name) {
            // `lift_compile` splits its `let`-bound tuple of filter results first
            // (`rewrite::split_tuple_lets`); as written, validation asks for that split.
            let errs = check(&src);
            assert!(
                errs.len() == 1 && errs[0].0.contains("cannot bound the length of this filter result"),
                "{}: {errs:?}",
                path.display()
            );
            continue;
        }
        assert_eq!(check(&src), vec![], "{}", path.display());
        n += 1;
    }
    assert!(n > 20, "only {n} examples");
}

#[test]
fn map_nesting_valid() {
    for body in [
        "(toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))",
        "(toGlobal (mapGlb1 (lambda (r) (mapGlb (lambda (x) x) r)) xs))",
        "(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (x) x) c))) (split #4 xs)))",
        "(map (lambda (r) (mapSeq (lambda (x) x) r)) xs)",
    ] {
        let src = if body.contains("split") {
            vec1(body)
        } else {
            mat(body).replace("(* x 2.0f)", "x")
        };
        let src = if body.contains("(* x 2.0f)") { vec1(body) } else { src };
        assert_eq!(check(&src), vec![], "{src}");
    }
}

#[test]
fn mapglb_inside_mapseq() {
    one_error(
        &mat("(toGlobal (mapSeq (lambda (r) (mapGlb (lambda (x) x) r)) xs))"),
        "`mapGlb` must be the outermost map of a kernel",
        "(mapGlb",
    );
}

#[test]
fn mapglb_same_dimension_nested() {
    one_error(
        &mat("(toGlobal (mapGlb (lambda (r) (mapGlb (lambda (x) x) r)) xs))"),
        "`mapGlb` must be the outermost map",
        "(mapGlb (lambda (x)",
    );
}

#[test]
fn maplcl_outside_mapwrg() {
    one_error(
        &vec1("(toGlobal (mapLcl (lambda (x) x) xs))"),
        "`mapLcl` must be inside `mapWrg`",
        "(mapLcl",
    );
}

#[test]
fn maplcl_of_another_dimension() {
    one_error(
        &vec1("(join (mapWrg (lambda (c) (toGlobal (mapLcl1 (lambda (x) x) c))) (split #4 xs)))"),
        "`mapLcl1` must be inside `mapWrg1`",
        "(mapLcl1",
    );
}

#[test]
fn mapwrg_inside_mapglb() {
    one_error(
        &mat(
            "(toGlobal (mapGlb1 (lambda (r) (join (mapWrg (lambda (c) (mapLcl (lambda (x) x) c)) (split #2 r)))) xs))",
        ),
        "`mapWrg` must be the outermost map of a kernel",
        "(mapWrg",
    );
}

#[test]
fn maplcl_in_a_mapglb_kernel() {
    // one error: the misplaced map is not reported again as a kernel mixing kinds
    one_error(
        &mat("(toGlobal (mapGlb1 (lambda (r) (mapLcl (lambda (x) x) r)) xs))"),
        "`mapLcl` must be inside `mapWrg`",
        "(mapLcl",
    );
}

#[test]
fn value_computed_directly_in_mapwrg() {
    // a sequential loop at work-group level: every work-item would write each element
    one_error(
        &vec1("(join (mapWrg (lambda (c) (toGlobal (mapSeq (lambda (x) (* x 2.0f)) c))) (split #4 xs)))"),
        "computed directly inside `mapWrg`",
        "(* x 2.0f)",
    );
    let errs = check(&vec1(
        "(join (mapWrg (lambda (c) (toGlobal (reduceSeq + 0.0f c))) (split #4 xs)))",
    ));
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("computed directly inside `mapWrg`") && at == "0.0f"),
        "{errs:?}"
    );
    // a loop at work-group level whose body distributes its writes with `mapLcl` is fine
    assert_eq!(
        check(&mat(
            "(join (mapWrg (lambda (c) (toGlobal (mapSeq (lambda (r) (mapLcl (lambda (x) x) r)) c))) (split #2 xs)))"
        )),
        vec![]
    );
}

#[test]
fn array_copied_directly_in_mapwrg() {
    one_error(
        &vec1("(join (mapWrg (lambda (c) (reverse c)) (split #4 xs)))"),
        "copying an array directly inside `mapWrg`",
        "(reverse",
    );
}

#[test]
fn tolocal_without_workgroup() {
    one_error(
        &mat("(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (toLocal (mapSeq (lambda (x) x) r)))) xs))"),
        "`toLocal` needs a work-group",
        "(toLocal",
    );
}

#[test]
fn toprivate_at_group_level() {
    one_error(
        &vec1("(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (x) x) (toPrivate (mapLcl (lambda (x) x) c))))) (split #4 xs)))"),
        "a private array at work-group level",
        "(toPrivate",
    );
}

#[test]
fn toprivate_around_maplcl() {
    let src = mat(
        "(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (r) (mapSeq (lambda (x) x) (toPrivate (mapLcl1 (lambda (x) x) r)))) c))) (split #2 xs)))",
    );
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("computed by several work-items") && at.starts_with("(toPrivate")),
        "{errs:?}"
    );
}

#[test]
fn private_size_unknown() {
    one_error(
        &mat("(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) x) r)))) xs))"),
        "a private array must have a size known at compile time",
        "(toPrivate",
    );
    assert_eq!(
        check(&vec1(
            "(join (toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) x) c)))) (split #4 xs))))"
        )),
        vec![]
    );
}

#[test]
fn maplcl_in_a_branch_at_group_level() {
    let src = prog(
        "N",
        "(array-type float N) float",
        "xs a",
        "(join (mapWrg (lambda (c) (let s (if (> a 0.0f) (at 0 (toLocal (mapLcl (lambda (y) y) c))) 0.0f) (toGlobal (mapLcl (lambda (x) (+ x s)) c)))) (split #4 xs)))",
    );
    let errs = check(&src);
    assert!(
        errs.iter().any(
            |(m, at)| m.contains("barrier after it must be reached by the whole work-group")
                && at.starts_with("(mapLcl (lambda (y) y) c)")
        ),
        "{errs:?}"
    );
}

#[test]
fn filterglb_inside_a_map() {
    let src = mat("(toGlobal (mapGlb (lambda (r) (filterGlb (lambda (x) (> x 0.0f)) r)) xs))");
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("`filterGlb` needs several kernels") && at.starts_with("(filterGlb")),
        "{errs:?}"
    );
}

/// The messages of [`validate_with`] for kernels built for `sizes`, with the spans' text.
fn check_with(src: &str, sizes: &[(&str, i64)]) -> Vec<(String, String)> {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("parse: {}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("types: {}\n{src}", d.message));
    let known: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    match validate_with(&prog, &info, &known) {
        Ok(()) => vec![],
        Err(ds) => ds
            .into_iter()
            .map(|d| (d.message, src[d.span.start as usize..d.span.end as usize].to_string()))
            .collect(),
    }
}

/// A private array and an unrolled loop over a row of length `M`: refused in generic kernels,
/// legal in kernels built for `M` within the limits, refused with the length and the size
/// beyond them; a size the length does not depend on changes nothing.
#[test]
fn known_sizes_fix_private_and_unrolled_lengths() {
    let private =
        mat("(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) x) r)))) xs))");
    let unrolled = mat("(toGlobal (mapGlb (lambda (r) (mapSeqUnroll (lambda (x) x) r)) xs))");
    let halves = mat("(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (toPrivate (mapSeqUnroll (lambda (x) x) (join (split #2 r)))))) xs))");
    for src in [&private, &unrolled, &halves] {
        assert_eq!(check_with(src, &[("M", 8), ("N", 100_000)]), vec![], "{src}");
        assert_eq!(check_with(src, &[("M", 1024)]), vec![], "{src}");
        assert_eq!(
            check_with(src, &[("N", 8)]).len(),
            1 + usize::from(src == &halves),
            "{src}"
        );
        assert!(!check(src).is_empty(), "{src}");
    }
    let errs = check_with(&private, &[("M", 1025)]);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0]
            .0
            .contains("this private array holds 1025 values (length M = 1025), more than the 1024")
            && errs[0].0.contains("use toLocal or toGlobal"),
        "{errs:?}"
    );
    assert!(errs[0].1.starts_with("(toPrivate"), "{errs:?}");
    let errs = check_with(&unrolled, &[("M", 100_000)]);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].0.contains("limited to 1024 steps") && errs[0].0.contains("has 100000 (length M = 100000)"),
        "{errs:?}"
    );
    assert!(errs[0].1.starts_with("(mapSeqUnroll"), "{errs:?}");
    // vectors count their lanes: 300 float4 are 1200 values
    let vecs = mat("(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) x) (asVector #4 r))))) xs))");
    assert_eq!(check_with(&vecs, &[("M", 1024)]), vec![]);
    let errs = check_with(&vecs, &[("M", 1200)]);
    assert!(
        errs.len() == 1
            && errs[0]
                .0
                .contains("holds 1200 values (length (M/4) = 300 with M = 1200)"),
        "{errs:?}"
    );
}

/// Literal lengths meet the same limits as those the sizes fix.
#[test]
fn private_and_unrolled_limits_without_sizes() {
    one_error(
        &vec1("(join (toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x) (toPrivate (mapSeq (lambda (x) x) c)))) (split #2048 xs))))"),
        "this private array holds 2048 values (length 2048)",
        "(toPrivate",
    );
    one_error(
        &vec1("(join (toGlobal (mapGlb (lambda (c) (mapSeqUnroll (lambda (x) x) c)) (split #2048 xs))))"),
        "limited to 1024 steps",
        "(mapSeqUnroll",
    );
}

#[test]
fn unrolled_loop_of_unknown_length() {
    one_error(
        &vec1("(toGlobal (reduceSeqUnroll + 0.0f xs))"),
        "need a length known at compile time",
        "(reduceSeqUnroll",
    );
}

#[test]
fn host_scalar_needing_statements() {
    let src = prog(
        "N",
        "(array-type float N)",
        "xs",
        "(let s (reduceSeq + 0.0f xs) (toGlobal (mapGlb (lambda (x) (* x (at 0 s))) xs)))",
    );
    // `reduceSeq` gives a one-element array, so this is legal; a scalar let of a computation is not
    assert_eq!(check(&src), vec![]);
    let src = prog(
        "N",
        "(array-type float N)",
        "xs",
        "(let s (at 0 (reduceSeq + 0.0f xs)) (toGlobal (mapGlb (lambda (x) (* x s)) xs)))",
    );
    one_error(&src, "a scalar computation outside any map needs statements", "(at 0");
}

#[test]
fn all_errors_are_reported() {
    let src = vec1("(toGlobal (mapLcl (lambda (x) x) (toLocal (mapLcl (lambda (x) x) xs))))");
    let errs = check(&src);
    // the inner `toLocal` becomes a kernel of its own (host level, where it means global memory)
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs.iter().all(|(m, _)| m.contains("`mapLcl` must be inside `mapWrg`")),
        "{errs:?}"
    );
}

#[test]
fn reindexing_between_a_vector_view_and_its_writes() {
    one_error(
        &vec1("(asScalar (join (toGlobal (mapWrg (lambda (c) (mapLcl (lambda (x) (* x 2.0f)) c)) (split #16 (asVector #4 xs))))))"),
        "the result of `join` cannot be written through the `asScalar` around it",
        "(join",
    );
    // the same inside a kernel, through `let k = v in layout(k)`
    let src = mat(
        "(toGlobal (mapGlb (lambda (r) (asScalar (join (mapSeq (lambda (c) (mapSeq (lambda (v) v) c)) (split #2 (asVector #4 r)))))) xs))",
    );
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("cannot be written through the `asScalar`") && at.starts_with("(join")),
        "{errs:?}"
    );
    assert_eq!(
        check(&vec1(
            "(asScalar (toGlobal (mapGlb (lambda (x) (* x 2.0f)) (asVector #4 xs))))"
        )),
        vec![]
    );
}

#[test]
fn primitives_the_back_end_cannot_emit() {
    let src = prog(
        "N",
        "(array-type float N)",
        "xs",
        "(toGlobal (mapGlb (lambda (t) (get #0 t)) (pad #1 #1 (tuple 0.0f 1.0f) (zip xs xs))))",
    );
    // tuples of scalars pad and generate component by component
    assert_eq!(check(&src), vec![]);
    let src = vec1("(toGlobal (mapGlb (lambda (t) (get #0 t)) (generate N (lambda (i) (tuple 1.0f 2.0f)))))");
    assert_eq!(check(&src), vec![]);
    // a tuple holding an array has no C value
    let src = vec1("(toGlobal (mapGlb (lambda (t) (get #0 t)) (generate N (lambda (i) (tuple 1.0f xs)))))");
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, _)| m == "generate of tuples containing arrays is not supported yet"),
        "{errs:?}"
    );
    // `let` in the function: it becomes a C function of the index, so it reads nothing else
    let src = vec1("(toGlobal (mapGlb (lambda (x) x) (generate N (lambda (i) (let y (to-float i) (* y y))))))");
    assert_eq!(check(&src), vec![]);
    // scalars from outside and the program's array parameters (input buffers) become
    // arguments of that function; other arrays cannot
    let src =
        vec1("(toGlobal (mapGlb (lambda (x) (at 0 (generate #2 (lambda (i) (let y (to-float i) (* y x)))))) xs))");
    assert_eq!(check(&src), vec![]);
    let src = vec1(
        "(toGlobal (mapGlb (lambda (x) (at 0 (generate #2 (lambda (i) (let y (to-float i) (* y (at 0 xs))))))) xs))",
    );
    assert_eq!(check(&src), vec![]);
    // an array made in the kernel (here a row, a view of the input) is read through its view
    let src = vec1(
        "(toGlobal (mapGlb (lambda (r) (at 0 (generate #2 (lambda (i) (let y (to-float i) (* y (at 0 r))))))) (split #2 xs)))",
    );
    assert_eq!(check(&src), vec![]);
    // a tuple has no C value to pass
    let src = vec1(
        "(toGlobal (mapGlb (lambda (p) (at 0 (generate #2 (lambda (i) (let y (to-float i) (* y (get #0 p))))))) (zip xs xs)))",
    );
    one_error(&src, "not `p` of type", "(lambda (i)");
    let src = vec1(
        "(toGlobal (mapGlb (lambda (x) x) (generate N (lambda (i) (let y (to-float i) (at 0 (generate #1 (lambda (j) y))))))))",
    );
    one_error(&src, "array primitives inside it are not supported yet", "(lambda (i)");
    // a loop over a scalar is statements over scalars
    let src = vec1(
        "(toGlobal (mapGlb (lambda (x) x) (generate N (lambda (i) (to-float (iterate-until #8 (lambda (a b) (> b 5)) (lambda (s) (+ s s)) i))))))",
    );
    assert_eq!(check(&src), vec![]);
    let src = vec1("(toGlobal (mapGlb (lambda (x) (* x 2.0f)) (generate N (lambda (i) (to-float i)))))");
    assert_eq!(check(&src), vec![]);
    // `at` needs statements too (its bounds check): an input read with it is an argument, and
    // so are the buffers and indices of an array made in the kernel
    let src = vec1(
        "(toGlobal (mapGlb (lambda (x) (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f \
         (generate #4 (lambda (i) (* x (at i xs))))))) xs))",
    );
    assert_eq!(check(&src), vec![]);
    let src = vec1(
        "(toGlobal (mapGlb (lambda (r) (toPrivate (reduceSeq (lambda (a y) (+ a y)) 0.0f \
         (generate #2 (lambda (i) (at i r)))))) (split #2 xs)))",
    );
    assert_eq!(check(&src), vec![]);
}

#[test]
fn two_mapglb_lengths_in_one_kernel() {
    let src = mat(
        "(toGlobal (mapGlb1 (lambda (r) (let t (toGlobal (mapGlb (lambda (x) x) r)) (mapGlb (lambda (p) p) (split #2 t)))) xs))",
    );
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("a kernel's launch has one size per dimension")
                && at.starts_with("(mapGlb (lambda (p)")),
        "{errs:?}"
    );
}

#[test]
fn iterate_beyond_the_unrolling_limit() {
    let body = |k: i64| {
        vec1(&format!(
            "(join (toGlobal (mapGlb (lambda (c) (iterate #{k} (lambda (a) (mapSeq (lambda (x) (* x 2.0f)) a)) c)) (split #4 xs))))"
        ))
    };
    one_error(
        &body(typeck::MAX_ITERATE + 1),
        "`iterate` is unrolled in generated code and limited to",
        "(iterate",
    );
    assert_eq!(check(&body(typeck::MAX_ITERATE)), vec![]);
}

#[test]
fn parameters_of_unsupported_types() {
    let src = prog("", "(vector-type float 4)", "v", "(vget #0 v)");
    let errs = check(&src);
    assert!(
        errs.iter()
            .any(|(m, at)| m.contains("parameters of type") && at.starts_with("(vector-type")),
        "{errs:?}"
    );
}

#[test]
fn array_of_filter_results_rearranged() {
    // the rows' capacity is the filter input's length, found only through the map that made them
    one_error(
        &mat("(mapGlb (lambda (r) (toGlobal (mapSeq (lambda (x) (+ x 1.0f)) r))) (reverse (mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) row))) xs)))"),
        "arrays of filter results only as the direct result of a map",
        "(reverse (mapGlb",
    );
}

#[test]
fn filter_results_through_let_and_at_are_bounded() {
    assert_eq!(
        check(&mat("(let rs (mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) row))) xs) (mapGlb (lambda (r) (toGlobal (mapSeq (lambda (x) (+ x 1.0f)) r))) rs))")),
        vec![]
    );
    assert_eq!(
        check(&vec1(
            "(toGlobal (mapSeq (lambda (x) (+ x 1.0f)) (reverse (filterSeq (lambda (x) (> x 0.0f)) xs))))"
        )),
        vec![]
    );
}

#[test]
fn array_of_filter_results_used_other_than_mapped() {
    let rows = "(mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) row))) xs)";
    one_error(
        &mat(&format!(
            "(let rs {rows} (toGlobal (mapGlb (lambda (x) (+ x 1.0f)) (at 0 rs))))"
        )),
        "can only be mapped over here",
        "rs",
    );
    assert_eq!(
        check(&mat(&format!(
            "(let rs {rows} (mapGlb (lambda (r) (toGlobal (mapSeq (lambda (x) (+ x 1.0f)) r))) rs))"
        ))),
        vec![]
    );
}

#[test]
fn arrays_of_arrays_of_filter_results() {
    // bound at host level, they would need a length per row of each row wherever read
    let errs = check(&mat("(let t (mapGlb (lambda (r) (toGlobal (mapSeq (lambda (c) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) c))) r))) (split #2 xs)) (mapGlb (lambda (s) (at 0 s)) t))"));
    assert!(
        errs.iter()
            .any(|(m, at)| m.starts_with("arrays of arrays of filter results") && at.starts_with("(mapGlb (lambda (r)")),
        "{errs:?}"
    );
    // as the program's result they have a lengths buffer of their shape
    assert_eq!(
        check(&mat("(mapGlb (lambda (r) (toGlobal (mapSeq (lambda (c) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) c))) r))) (split #2 xs))")),
        vec![]
    );
}

#[test]
fn generate_of_arrays() {
    one_error(
        &vec1("(toGlobal (mapGlb (lambda (x) (+ x 1.0f)) (join (generate #4 (lambda (i) xs)))))"),
        "generate of arrays is not supported yet",
        "(lambda (i) xs)",
    );
}

#[test]
fn tuples_containing_arrays_are_stored_as_structs_of_arrays() {
    // stored as one buffer per component: the program's result, an element a map stores
    assert_eq!(check(&mat("(zip (generate N (lambda (i) 0.0f)) xs)")), vec![]);
    assert_eq!(
        check(&mat("(toGlobal (mapGlb (lambda (r) (tuple r 1.0f)) xs))")),
        vec![]
    );
    // a tuple of arrays taken apart by the map that reads it is a view
    assert_eq!(
        check(&mat(
            "(toGlobal (mapGlb (lambda (p) (reduceSeq + (get #0 p) (get #1 p))) (zip (generate N (lambda (i) 0.0f)) xs)))"
        )),
        vec![]
    );
    // at any depth, and inside work-groups
    assert_eq!(
        check(&mat(
            "(toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) (tuple r x)) r)) xs))"
        )),
        vec![]
    );
    assert_eq!(
        check(&mat(
            "(toGlobal (mapGlb (lambda (r) (tuple (mapSeq (lambda (x) (tuple r x)) r) 1.0f)) xs))"
        )),
        vec![]
    );
    // a filter keeps tuples holding arrays as a struct of arrays with the one run-time length,
    // in a kernel of its own or inside a work-item
    assert_eq!(
        check(&mat(
            "(toGlobal (filterGlb (lambda (p) (> (at 0 (get #1 p)) 0.0f)) (zip (generate N (lambda (i) 0.0f)) xs)))"
        )),
        vec![]
    );
    assert_eq!(
        check(&mat(
            "(mapGlb (lambda (r) (toGlobal (filterSeq (lambda (p) (> (get #0 p) 0.0f)) (zip r (split #1 r))))) xs)"
        )),
        vec![]
    );
    // the program's result may be a tuple of filter results, each with its own length
    assert_eq!(
        check(&mat("(tuple (filter (lambda (r) (> (at 0 r) 0.0f)) xs) (toGlobal (filterGlb (lambda (p) (> (get #0 p) 0.0f)) (zip (generate N (lambda (i) 0.0f)) xs))))")),
        vec![]
    );
    // and of rows of filter results, with a length per row
    assert_eq!(
        check(&mat(
            "(tuple (mapGlb (lambda (r) (toGlobal (filterSeq (lambda (x) (> x 0.0f)) r))) xs) xs)"
        )),
        vec![]
    );
    // a run-time length inside a tuple has no length buffer
    one_error(
        &mat("(toGlobal (mapGlb (lambda (r) (tuple (filterSeq (lambda (x) (> x 0.0f)) r) 1.0f)) xs))"),
        "tuples containing filter results",
        "(tuple (filterSeq",
    );
    // `if` selects between C values
    one_error(
        &mat("(toGlobal (mapGlb (lambda (r) (if (> (at 0 r) 0.0f) (tuple r 1.0f) (tuple r 2.0f))) xs))"),
        "`if` choosing between tuples containing arrays is not supported yet",
        "(if (> (at 0 r)",
    );
    // bound at host level, a tuple holding arrays is stored (a kernel per component)
    assert_eq!(
        check(&mat(
            "(let p (tuple xs (toGlobal (mapGlb (lambda (r) (reduceSeq + 0.0f r)) xs))) (get #1 p))"
        )),
        vec![]
    );
    // an accumulator is copied between steps as C values
    one_error(
        &mat("(toGlobal (reduceSeq (lambda (acc r) (tuple (get #0 acc) (+ (get #1 acc) 1.0f))) (tuple (generate M (lambda (i) 0.0f)) 0.0f) xs))"),
        "reductions whose accumulator is a tuple containing arrays",
        "(tuple (get #0 acc)",
    );
}

/// A private array in an `iterate` body whose length changes with the steps counts at its
/// largest step (the first of a halving body): chunks of 4096 halve to 2048 values, then 1024,
/// which the `iterate`'s private buffers hold.
#[test]
fn private_lengths_count_at_the_largest_iterate_step() {
    let halving = |chunk: i64, steps: i64| {
        vec1(&format!(
            "(join (toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x)
               (iterate #{steps} (lambda (a) (toPrivate (mapSeq (lambda (p) (+ (at 0 p) (at 1 p))) (split #2 a)))) c)))
             (split #{chunk} xs))))"
        ))
    };
    assert_eq!(check(&halving(2048, 3)), vec![]);
    one_error(
        &halving(4096, 3),
        "this private array holds 2048 values (length",
        "(iterate #3",
    );
    let errs = check(&halving(4096, 3));
    assert!(
        errs[0].0.contains("= 2048 at the largest step of its `iterate`"),
        "{errs:?}"
    );
    // the same lengths fixed by a size built in
    let sized = |n: i64| {
        check_with(
            &prog(
                "N M",
                "(array-type (array-type float M) N)",
                "xs",
                "(toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x)
                   (iterate #2 (lambda (a) (toPrivate (mapSeq (lambda (p) (+ (at 0 p) (at 1 p))) (split #2 a)))) c))) xs))",
            ),
            &[("M", n)],
        )
    };
    assert_eq!(sized(2048), vec![]);
    let errs = sized(4096);
    assert!(
        errs.len() == 1 && errs[0].0.contains("holds 2048 values") && errs[0].1.starts_with("(iterate #2"),
        "{errs:?}"
    );
}

/// An unrolled loop in an `iterate` body counts its steps at the largest step too (a sum of
/// the chunk, then of its one value).
#[test]
fn unrolled_lengths_count_at_the_largest_iterate_step() {
    let summing = |chunk: i64| {
        vec1(&format!(
            "(join (toGlobal (mapGlb (lambda (c) (mapSeq (lambda (x) x)
               (iterate #2 (lambda (a) (toPrivate (reduceSeqUnroll + 0.0f a))) c)))
             (split #{chunk} xs))))"
        ))
    };
    assert_eq!(check(&summing(1024)), vec![]);
    one_error(
        &summing(2048),
        "but this one has 2048 (length L1 = 2048 at the largest step",
        "(reduceSeqUnroll",
    );
}

/// Unrolled loops inside unrolled loops: each within the limit, their product past it is
/// refused at the inner loop, naming the product; within it, accepted.
#[test]
fn nested_unrolled_loops_count_their_product() {
    let nest = |inner: i64, outer: i64| {
        vec1(&format!(
            "(join (toGlobal (mapGlb (lambda (r) (join (mapSeqUnroll (lambda (c) (mapSeqUnroll (lambda (x) (* x 2.0f)) c)) (split #{inner} r))))
               (split #{} xs))))",
            inner * outer
        ))
    };
    assert_eq!(check(&nest(64, 16)), vec![]);
    let errs = check(&nest(64, 32));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].0.contains("hold this loop's body 2048 times (32 × 64 steps")
            && errs[0].0.contains("more than the 1024 steps"),
        "{errs:?}"
    );
    assert!(errs[0].1.starts_with("(mapSeqUnroll (lambda (x)"), "{errs:?}");
    // the lengths fixed by a size built in: the same
    let sized = |m: i64| {
        check_with(
            &mat("(toGlobal (mapGlb (lambda (r) (join (mapSeqUnroll (lambda (c) (mapSeqUnroll (lambda (x) x) c)) (split #64 r)))) xs))"),
            &[("M", m)],
        )
    };
    assert_eq!(sized(1024), vec![]);
    let errs = sized(4096);
    assert!(
        errs.len() == 1 && errs[0].0.contains("4096 times (64 × 64 steps"),
        "{errs:?}"
    );
    // an unrolled reduction around an unrolled map multiplies the same way
    let reduce = vec1(
        "(join (toGlobal (mapGlb (lambda (r) (mapSeq (lambda (x) x) (reduceSeqUnroll (lambda (acc c) (toPrivate (mapSeqUnroll (lambda (p) (+ (get #0 p) (get #1 p))) (zip acc c)))) (toPrivate (mapSeqUnroll (lambda (x) 0.0f) (at 0 (split #64 r)))) (split #64 r))))
           (split #2048 xs))))",
    );
    let errs = check(&reduce);
    assert!(
        errs.len() == 1 && errs[0].0.contains("2048 times (32 × 64 steps"),
        "{errs:?}"
    );
}

/// `at` with a literal index out of range of a known length (a literal one, or fixed by the
/// sizes built in) is refused at the index; where the length is not known it is left to the
/// run-time check.
#[test]
fn constant_at_index_out_of_range() {
    let window = |i: i64| vec1(&format!("(toGlobal (mapGlb (lambda (w) (at {i} w)) (slide #3 #1 xs)))"));
    assert_eq!(check(&window(2)), vec![]);
    one_error(
        &window(3),
        "the index of `at` is 3, out of range for an array of length 3",
        "3",
    );
    let row = mat("(toGlobal (mapGlb (lambda (r) (at 7 r)) xs))");
    assert_eq!(check(&row), vec![]);
    assert_eq!(check_with(&row, &[("M", 8)]), vec![]);
    let errs = check_with(&row, &[("M", 7)]);
    assert!(
        errs.len() == 1
            && errs[0]
                .0
                .contains("the index of `at` is 7, out of range for an array of length M = 7")
            && errs[0].1 == "7",
        "{errs:?}"
    );
}

#[test]
fn loops_inside_a_work_item_are_accepted_in_work_items_and_with_a_count_in_groups() {
    let k = |body: &str| prog("N K", "(array-type float N)", "xs", body);
    assert_eq!(
        check(&k(
            "(toGlobal (mapGlb (lambda (a) (iterate K (lambda (x) (* x 0.5f)) a)) xs))"
        )),
        vec![]
    );
    assert_eq!(
        check(&vec1(
            "(toGlobal (mapGlb (lambda (a) (iterate-until #9 (lambda (p q) (< q 1.0f)) (lambda (x) (* x 0.5f)) a)) xs))"
        )),
        vec![]
    );
    // inside a sequential map and in the condition's fold over a private array
    assert_eq!(
        check(&mat(
            "(mapGlb (lambda (r) (toGlobal (mapSeq (lambda (x) x) (iterate-until #9 (lambda (p q) (reduceSeq (lambda (c x) (and c (< x 1.0f))) true q)) (lambda (s) (toPrivate (mapSeq (lambda (x) (* x 0.5f)) s))) (toPrivate (mapSeq (lambda (x) x) r)))))) (split #4 (join xs)))"
        )),
        vec![]
    );
    // a uniform count at work-group level: every work-item runs the same steps and barriers
    assert_eq!(
        check(&k("(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (x) x) (iterate K (lambda (s) (toLocal (mapLcl (lambda (x) (* x 0.5f)) s))) (toLocal (mapLcl (lambda (x) x) c)))))) (split #64 xs)))")),
        vec![]
    );
}

#[test]
fn iterate_until_at_work_group_level_is_refused() {
    one_error(
        &vec1("(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (x) x) (iterate-until #9 (lambda (p q) (< (at 0 q) 1.0f)) (lambda (s) (toLocal (mapLcl (lambda (x) (* x 0.5f)) s))) (toLocal (mapLcl (lambda (x) x) c)))))) (split #64 xs)))"),
        "`iterate-until` directly inside `mapWrg` (outside `mapLcl`) is not supported yet",
        "(iterate-until",
    );
    // a scalar state at work-group level would be computed by every work-item of the group
    one_error(
        &vec1("(join (mapWrg (lambda (c) (toGlobal (mapSeq (lambda (x) (iterate #3 (lambda (y) (* y 2.0f)) x)) c))) (split #64 xs)))"),
        "computed directly inside `mapWrg`",
        "(iterate #3",
    );
}

/// A loop's array state read as an input is a temporary where its step's `toX` puts it: at
/// work-group level, private memory would be written by every work-item of the group.
#[test]
fn a_loop_state_at_work_group_level_is_not_private() {
    let k = |body: &str| prog("N K", "(array-type float N)", "xs", body);
    one_error(
        &k("(join (mapWrg (lambda (c) (toGlobal (mapLcl (lambda (x) x) (iterate K (lambda (s) (toPrivate (mapLcl (lambda (x) (* x 0.5f)) (reverse s)))) (toLocal (mapLcl (lambda (x) x) c)))))) (split #64 xs)))"),
        "a private array at work-group level would be written by every work-item; use toLocal",
        "(iterate K",
    );
}

/// A loop inside a work-item over a tuple holding an array is refused as `iterate` over one is
/// (the back end stores no such state), for `iterate-until` too.
#[test]
fn a_loop_over_a_tuple_holding_an_array_is_refused() {
    one_error(
        &vec1("(join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (x) x) (get #0 (iterate-until #3 (lambda (p q) (> (get #1 q) 1.0f)) (lambda (s) (tuple (toPrivate (mapSeq (lambda (x) (* x 2.0f)) (get #0 s))) (+ (get #1 s) 1.0f))) (tuple (toPrivate (mapSeq (lambda (x) x) c)) 0.0f)))))) (split #4 xs)))"),
        "iterating over tuples containing arrays is not supported yet",
        "(iterate-until",
    );
}
