use crate::infer;

/// Types `body` over `xs : [float]N`, `ys : [float]M`, `xss : [[float]M]N` and returns the
/// result type or the error message.
fn ty(body: &str) -> String {
    let src = format!(
        "(lift (N M) ((array-type float N) (array-type float M) (array-type (array-type float M) N) float) (lambda (xs ys xss a) {body}))"
    );
    let prog = ir::parse(&src).unwrap_or_else(|d| panic!("parse: {}", d.message));
    match infer(&prog) {
        Ok(info) => info.result().to_string(),
        Err(d) => format!("error: {}", d.message),
    }
}

#[test]
fn maps_and_zips_keep_lengths() {
    assert_eq!(ty("(mapGlb (lambda (x) (* x a)) xs)"), "[float]N");
    assert_eq!(ty("(zip xs (mapSeq (lambda (x) (to-int x)) xs))"), "[(float, int)]N");
    assert_eq!(
        ty("(zip xs ys)"),
        "error: `zip` of arrays of different lengths: N and M"
    );
}

#[test]
fn split_join_and_transpose_compute_lengths() {
    assert_eq!(ty("(split #4 xs)"), "[[float]4](N/4)");
    assert_eq!(ty("(join (split #4 xs))"), "[float]N");
    assert_eq!(ty("(zip xs (join (split #4 xs)))"), "[(float, float)]N");
    assert_eq!(ty("(transpose xss)"), "[[float]N]M");
    assert_eq!(ty("(join xss)"), "[float](M*N)");
    assert_eq!(ty("(slide #3 #1 (pad-clamp #1 #1 xs))"), "[[float]3]N");
}

/// Windows that do not fit are dropped: `(N - s) / t + 1` windows with floor division, so
/// `join` of them is not `N` elements when `t` does not divide `N - s`.
#[test]
fn slide_counts_whole_windows() {
    assert_eq!(ty("(slide #2 #2 xs)"), "[[float]2](N/2)");
    assert_eq!(ty("(join (slide #2 #2 xs))"), "[float](2*(N/2))");
    assert_eq!(ty("(slide #3 #2 xs)"), "[[float]3](((N+1)/2)-1)");
    assert_eq!(
        ty("(zip xs (join (slide #2 #2 xs)))"),
        "error: `zip` of arrays of different lengths: N and (2*(N/2))"
    );
}

#[test]
fn reductions_return_one_element_arrays() {
    assert_eq!(ty("(reduce + 0.0f xs)"), "[float]1");
    assert_eq!(ty("(reduceSeq (lambda (acc x) (+ acc (to-int x))) 0 xs)"), "[int]1");
    assert!(ty("(reduce + 0 xs)").starts_with("error: the initial value of `reduce` has type int"));
}

#[test]
fn filters_are_existential_and_packed_when_bound() {
    assert_eq!(ty("(filter (lambda (x) (> x 0.5f)) xs)"), "{∃X. [float]X}");
    assert_eq!(
        ty("(mapSeq (lambda (x) (* x 2.0f)) (filterSeq (lambda (x) (> x 0.5f)) xs))"),
        "{∃X. [float]X}"
    );
    assert_eq!(
        ty("(let ys (filter (lambda (x) (> x 0.5f)) xs) (zip ys (map (lambda (y) y) ys)))"),
        "{∃X. [(float, float)]X}"
    );
    assert_eq!(
        ty("(reduceSeq + 0.0f (filterSeq (lambda (x) (> x 0.5f)) xs))"),
        "[float]1"
    );
}

#[test]
fn two_filter_results_cannot_be_zipped() {
    let e = ty("(zip (filter (lambda (x) (> x 0.5f)) xs) (filter (lambda (x) (< x 0.5f)) xs))");
    assert_eq!(e, "error: `zip` of arrays of different lengths: X1 and X2");
}

#[test]
fn existential_lengths_must_not_escape() {
    let e = ty("(unpack ys (filterSeq (lambda (x) (> x 0.5f)) xs) (tuple ys ys))");
    assert!(
        e.starts_with("error: the run-time length X1 escapes its `unpack`"),
        "{e}"
    );
    let e = ty("(unpack zs (filterSeq (lambda (x) (> x 0.5f)) xs) (map (lambda (x) zs) xs))");
    assert!(e.starts_with("error: the run-time length X1 escapes"), "{e}");
    assert!(ty("(unpack zs xs zs)").starts_with("error: `unpack` needs an existential array"));
}

#[test]
fn nested_filters_give_arrays_of_existentials() {
    assert_eq!(
        ty("(mapGlb (lambda (row) (filterSeq (lambda (x) (> x 0.0f)) row)) xss)"),
        "[{∃X. [float]X}]N"
    );
    assert_eq!(ty("(mapGlb (lambda (row) (mapSeq (lambda (x) x) row)) (mapGlb (lambda (row) (filterSeq (lambda (x) (> x 0.0f)) row)) xss))"), "[{∃X. [float]X}]N");
}

#[test]
fn iterate_applies_the_length_function() {
    let halve = "(lambda (v) (join (mapSeq (lambda (p) (reduceSeq + 0.0f p)) (split #2 v))))";
    assert_eq!(ty(&format!("(iterate #3 {halve} xs)")), "[float](N/8)");
    assert_eq!(
        ty("(iterate #2 (lambda (v) (mapSeq (lambda (x) (* x 2.0f)) v)) xs)"),
        "[float]N"
    );
}

#[test]
fn predicates_must_be_boolean_and_operands_agree() {
    assert!(ty("(filter (lambda (x) (* x 2.0f)) xs)")
        .starts_with("error: the predicate of `filter` must return bool, but it returns float"));
    assert!(ty("(map (lambda (x) (* x 2)) xs)").starts_with("error: `*` of float and int"));
    assert!(ty("(map (lambda (x) (if x 1.0f 2.0f)) xs)").starts_with("error: the condition of `if` must be bool"));
}

#[test]
fn divisibility_is_checked_at_compile_time_when_constant() {
    let src = "(lift () ((array-type float 10)) (lambda (xs) (split #3 xs)))";
    let e = infer(&ir::parse(src).unwrap()).unwrap_err();
    assert!(e.message.contains("not a multiple of 3"), "{}", e.message);
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (split #3 xs)))";
    let info = infer(&ir::parse(src).unwrap()).unwrap();
    assert_eq!(info.checks.len(), 1);
    assert!(info.checks[0]
        .verify(&|_| Some(10))
        .unwrap_err()
        .contains("not a multiple of 3"));
    assert!(info.checks[0].verify(&|_| Some(12)).is_ok());
}

/// Types a whole program, returning the result type or the error message.
fn prog_ty(src: &str) -> String {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("parse: {}", d.message));
    match infer(&prog) {
        Ok(info) => info.result().to_string(),
        Err(d) => format!("error: {}", d.message),
    }
}

/// A user's size may be spelled like the lengths the checker invents (`X1`, `L1`).
#[test]
fn user_sizes_named_like_generated_lengths() {
    assert_eq!(
        prog_ty("(lift (X1) ((array-type float X1)) (lambda (xs) (mapGlb (lambda (x) x) xs)))"),
        "[float]X1"
    );
    // A filter result next to a user's `X1`: its length is a different variable.
    let filtered = prog_ty(
        "(lift (X1) ((array-type float X1)) (lambda (xs) \
           (let ys (filterSeq (lambda (x) (> x 0.0f)) xs) (zip ys xs))))",
    );
    assert!(
        filtered.starts_with("error: `zip` of arrays of different lengths"),
        "{filtered}"
    );
    assert_eq!(
        prog_ty(
            "(lift (X1) ((array-type float X1)) (lambda (xs) \
           (let ys (filterSeq (lambda (x) (> x 0.0f)) xs) (mapSeq (lambda (y) y) ys))))"
        ),
        "{∃X. [float]X}"
    );
    assert_eq!(
        prog_ty(
            "(lift (L1) ((array-type float L1)) (lambda (xs) \
           (iterate #2 (lambda (v) (join (split #2 v))) xs)))"
        ),
        "[float]L1"
    );
}

/// The quotient of `split #2` and a user's `(/ N 2)` are one length once `2 | N` is checked.
#[test]
fn exact_and_floor_division_agree_under_a_check() {
    assert_eq!(
        prog_ty(
            "(lift (N) ((array-type float N) (array-type float (/ N 2))) (lambda (xs ys) \
           (zip (split #2 xs) ys)))"
        ),
        "[([float]2, float)](N/2)"
    );
    assert_eq!(
        prog_ty(
            "(lift (N) ((array-type float N) (array-type float (* (/ N 2) 2))) (lambda (xs ys) \
           (zip (join (split #2 xs)) ys)))"
        ),
        "[(float, float)]N"
    );
    // Without a check that makes it exact, the floor stays a floor.
    assert!(prog_ty(
        "(lift (N) ((array-type float N) (array-type float (* (/ N 2) 2))) (lambda (xs ys) \
           (zip xs ys)))"
    )
    .starts_with("error: `zip` of arrays of different lengths"));
}

/// A function of two parameters where `map` passes one element that is not a pair.
#[test]
fn several_parameters_for_one_value_name_the_count() {
    assert_eq!(
        ty("(mapGlb (lambda (x y) (* x y)) xs)"),
        "error: this function takes 2 parameters, but is called with one value of type float"
    );
    assert_eq!(ty("(mapGlb (lambda (x y) (* x y)) (zip xs xs))"), "[float]N");
    assert_eq!(
        ty("(mapGlb (lambda (p) (get #2 p)) (zip xs xs))"),
        "error: `get #2` needs a tuple of more than 2 components, not (float, float)"
    );
}

/// Every compound length must fit 64 bits once the sizes are known; quotients of sizes always do.
#[test]
fn compound_lengths_are_checked_to_fit() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (join (mapGlb (lambda (x) (generate (* N N) (lambda (i) x))) (split #2 xs)))))";
    let prog = ir::parse(src).unwrap();
    let info = infer(&prog).unwrap();
    let fits: Vec<_> = info
        .checks
        .iter()
        .filter(|c| matches!(c.kind, crate::CheckKind::Fits { .. }))
        .collect();
    assert!(!fits.is_empty());
    let big = |n: &str| (n == "N").then_some(1i64 << 32);
    let err = fits.iter().find_map(|c| c.verify(&big).err()).expect("N*N overflows");
    assert!(err.contains("does not fit a 64-bit integer"), "{err}");
    assert!(info.checks.iter().all(|c| c.verify(&|_| Some(10)).is_ok()));
    let rendered = info.render(&prog);
    assert!(
        !rendered.lines().any(|l| l.starts_with("check") && l.contains("N*N")),
        "not listed by render:\n{rendered}"
    );
}

#[test]
fn host_sections_keep_the_state_type_and_select_arrays_only_at_host_level() {
    // A host loop may count with a size variable; its state keeps its type.
    assert_eq!(
        ty("(iterate M (lambda (s) (mapGlb (lambda (x) (* x a)) s)) xs)"),
        "[float]N"
    );
    assert_eq!(
        ty("(iterate-until #9 (lambda (p q) (reduceSeq (lambda (c x) (and c (> x 0.0f))) true q)) (lambda (s) (mapGlb (lambda (x) (* x a)) s)) xs)"),
        "[float]N"
    );
    assert_eq!(
        ty("(iterate-until #9 (lambda (p q) 1.0f) (lambda (s) (mapGlb (lambda (x) x) s)) xs)"),
        "error: the condition of `iterate-until` must be a bool or [bool]1, but it is float"
    );
    assert!(ty("(iterate-until #9 (lambda (p q) true) (lambda (s) (mapGlb (lambda (x) x) (join (split #2 s)))) (join (split #2 (join (split #2 xs)))))")
        .starts_with("[float]"));
    // Inside a kernel a size-variable count is a loop of one work-item (`loops.rs`).
    assert_eq!(
        ty("(mapGlb (lambda (r) (iterate M (lambda (s) (mapSeq (lambda (x) x) s)) r)) xss)"),
        "[[float]M]N"
    );
    // `if` selects arrays at host level, on a bool or a [bool]1 ...
    assert_eq!(ty("(if (> a 0.0f) xs (mapGlb (lambda (x) x) xs))"), "[float]N");
    assert_eq!(
        ty("(if (reduceSeq (lambda (c x) (and c (> x 0.0f))) true xs) xs xs)"),
        "[float]N"
    );
    // ... but not inside a kernel.
    assert_eq!(
        ty("(mapGlb (lambda (r) (if (> a 0.0f) r r)) xss)"),
        "error: `if` selects between scalars, tuples or vectors, not [float]M"
    );
}

/// A host loop's state may be a filter result, `{∃X. [T]X}` → `{∃X. [T]X}`: from a filter
/// result, or from an array whose step filters; its element type still must not change, and
/// a parameter of that type (a host unit's) is unpacked, its result packed.
#[test]
fn a_host_loops_state_may_be_a_filter_result() {
    let shrink = "(lambda (s) (filter (lambda (x) (> x 1.0f)) (map (lambda (x) (* x a)) s)))";
    let ex = "{∃X. [float]X}";
    assert_eq!(ty(&format!("(iterate M {shrink} xs)")), ex);
    assert_eq!(
        ty(&format!("(iterate M {shrink} (filter (lambda (x) (< x a)) xs))")),
        ex
    );
    assert_eq!(
        ty(&format!(
            "(iterate-until #9 (lambda (p q) (> (at 0 (reduce + 0 (map (lambda (x) 1) q))) 3)) {shrink} xs)"
        )),
        ex
    );
    // Each branch of a host `if` returns a filter result.
    assert_eq!(
        ty("(iterate M (lambda (s) (if (> a 0.0f) (filter (lambda (x) (> x a)) s) (pack (map (lambda (x) x) s)))) xs)"),
        ex
    );
    assert_eq!(
        ty("(iterate M (lambda (s) (filter (lambda (x) (> x 0)) (map (lambda (x) (to-int x)) s))) xs)"),
        "error: the function of a host-level `iterate` must keep the state's type [float]N, but it returns {∃X. [int]X}"
    );
    let unit = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x 2.0f)) xs)))";
    let mut prog = ir::parse(unit).expect("parses");
    prog.params[0].ty = ir::Type::Exists(Box::new(ir::Type::float()));
    let info = infer(&prog).expect("types");
    assert_eq!(info.result().to_string(), ex);
    assert_eq!(info.param_unpacks.len(), 1);
}

/// Types `body` over `u : uint`, `l : ulong`, `i : int`, `f : float`, `d : double`,
/// `v : uint4`, `fv : float4`.
fn int_ty(body: &str) -> String {
    let src = format!(
        "(lift () (uint ulong int float double (vector-type uint 4) (vector-type float 4)) (lambda (u l i f d v fv) {body}))"
    );
    let prog = ir::parse(&src).unwrap_or_else(|d| panic!("parse: {}", d.message));
    match infer(&prog) {
        Ok(info) => info.result().to_string(),
        Err(d) => format!("error: {}", d.message),
    }
}

#[test]
fn bit_operations_take_integers_and_keep_the_type() {
    assert_eq!(int_ty("(bit-xor u 0x9e3779b9u)"), "uint");
    assert_eq!(int_ty("(bit-and v 255u)"), "uint4");
    assert_eq!(int_ty("(bit-not l)"), "ulong");
    assert_eq!(int_ty("(shl l 13)"), "ulong");
    assert_eq!(int_ty("(shr v (vec 1u 2u 3u 4u))"), "uint4");
    assert_eq!(int_ty("(rotl v 7)"), "uint4");
    assert_eq!(
        int_ty("(bit-or u l)"),
        "error: `bit-or` of uint and ulong: the operands must have the same type"
    );
    assert_eq!(
        int_ty("(bit-and f 1.0f)"),
        "error: `bit-and` needs an integer (int, uint, long or ulong), but this is float"
    );
    assert_eq!(
        int_ty("(shl u 1.0f)"),
        "error: `shl` needs an integer (int, uint, long or ulong), but this is float"
    );
    assert_eq!(
        int_ty("(bit-not true)"),
        "error: `bit-not` needs an integer (int, uint, long or ulong), but this is bool"
    );
    assert_eq!(
        int_ty("(shl i v)"),
        "error: `shl` of int by uint4: the count must be an integer scalar or a vector of the type of the value"
    );
}

#[test]
fn conversions_and_reinterpretation_of_integers() {
    assert_eq!(int_ty("(to-ulong f)"), "ulong");
    assert_eq!(int_ty("(to-float l)"), "float");
    assert_eq!(int_ty("(to-int l)"), "int");
    assert_eq!(int_ty("(as-uint f)"), "uint");
    assert_eq!(int_ty("(as-double l)"), "double");
    assert_eq!(int_ty("(as-uint fv)"), "uint4");
    assert_eq!(int_ty("(as-float i)"), "float");
    assert_eq!(
        int_ty("(as-ulong f)"),
        "error: `as-ulong` of float: reinterpreting needs the same width, and float has 32 bits, ulong has 64"
    );
    assert_eq!(
        int_ty("(as-int (> i 0))"),
        "error: `as-int` cannot reinterpret bool: bool has no bit layout"
    );
    assert_eq!(int_ty("(to-uint v)"), "error: `to-uint` converts scalars, not uint4");
    assert_eq!(int_ty("(< u 3u)"), "bool");
    assert_eq!(int_ty("(max l 1ul)"), "ulong");
    assert_eq!(int_ty("(abs (- 0l 3l))"), "long");
}

/// Exact and floor division are one notion once a check shows the division exact, however
/// the checks were written: `10 | N` and `3 | N/10` show `30 | N`, and `4 | N` shows `2 | N`.
#[test]
fn a_users_division_equals_a_nested_split_length() {
    assert_eq!(
        ty("(zip (split #3 (split #10 xs)) (generate (/ N 30) (lambda (i) (to-float i))))"),
        "[([[float]10]3, float)](N/30)"
    );
    assert_eq!(
        ty("(zip (asVector #4 xs) (asVector #2 (generate (/ N 2) (lambda (i) (to-float i)))))"),
        "[(float4, float2)](N/4)"
    );
    assert_eq!(
        ty("(zip (split #4 xs) (generate (/ N 3) (lambda (i) (to-float i))))"),
        "error: `zip` of arrays of different lengths: (N/4) and (N/3)"
    );
}

/// The host plan kept beside the types (`TypeInfo::host`) lists the sections by kind, with
/// the array-valued host `if`s this checker admits as selections; a loop inside a kernel is
/// none, and only host-level nodes hold sections.
#[test]
fn the_host_plan_lists_sections_by_kind() {
    use ir::host::Section;
    let plan = |body: &str| {
        let src = format!(
            "(lift (N M) ((array-type float N) (array-type (array-type float M) N) float) (lambda (xs xss a) {body}))"
        );
        let prog = ir::parse(&src).unwrap_or_else(|d| panic!("parse: {}", d.message));
        let info = infer(&prog).unwrap_or_else(|d| panic!("types: {}", d.message));
        let kinds: Vec<Section> = info.host.sections().map(|(_, s)| s).collect();
        (prog, info, kinds)
    };
    let (prog, info, kinds) = plan("(iterate M (lambda (s) (mapGlb (lambda (x) (* x a)) s)) xs)");
    assert_eq!(kinds, [Section::Loop]);
    assert!(info.host.holds_section(prog.body) && info.host.launches_from_host());
    // a branch over kernels, and a selection of arrays whose parts launch none
    let (_, info, kinds) = plan("(if (> a 0.0f) xs (mapGlb (lambda (x) x) xs))");
    assert_eq!(kinds, [Section::Branch]);
    assert!(info.host.launches_from_host());
    let (_, info, kinds) = plan("(if (> a 0.0f) xs xs)");
    assert_eq!(kinds, [Section::Select]);
    assert!(info.host.has_sections() && !info.host.launches_from_host());
    // an unrolled `iterate` inside a kernel is kernel code: no section, not host level
    let (prog, info, kinds) = plan("(mapGlb (lambda (r) (iterate #2 (lambda (s) (mapSeq (lambda (x) x) s)) r)) xss)");
    assert_eq!(kinds, []);
    let inner = (0..prog.exprs.len())
        .map(|i| ir::ExprId(i as u32))
        .find(|e| {
            matches!(
                prog.expr(*e),
                ir::Expr::Prim {
                    prim: ir::Prim::Iterate(_),
                    ..
                }
            )
        })
        .expect("an iterate");
    assert!(!info.host.at_host(inner) && !info.host.has_sections());
}

#[test]
fn loops_inside_a_work_item_keep_their_state_type() {
    // scalars, tuples and vectors, with a run-time or a literal count
    assert_eq!(
        ty("(mapGlb (lambda (x) (iterate M (lambda (y) (* y a)) x)) xs)"),
        "[float]N"
    );
    assert_eq!(
        ty("(mapGlb (lambda (x) (iterate #3 (lambda (y) (* y a)) x)) xs)"),
        "[float]N"
    );
    assert_eq!(
        ty("(map (lambda (x) (iterate M (lambda (s) (tuple (* (get #0 s) x) (+ (get #1 s) 1))) (tuple x 0))) xs)"),
        "[(float, int)]N"
    );
    assert_eq!(
        ty("(mapGlb (lambda (v) (iterate M (lambda (u) (* u 2.0f)) v)) (asVector #4 xs))"),
        "[float4](N/4)"
    );
    // `iterate-until` in a kernel: the condition of the previous and the new state
    assert_eq!(
        ty("(mapGlb (lambda (x) (iterate-until #100 (lambda (p q) (< q 1.0f)) (lambda (y) (* y 0.5f)) x)) xs)"),
        "[float]N"
    );
    assert_eq!(
        ty("(mapGlb (lambda (r) (iterate-until #9 (lambda (p q) (reduceSeq (lambda (c x) (and c (< x 1.0f))) true q)) (lambda (s) (mapSeq (lambda (x) (* x 0.5f)) s)) r)) xss)"),
        "[[float]M]N"
    );
    assert_eq!(
        ty("(mapGlb (lambda (x) (iterate-until #9 (lambda (p q) q) (lambda (y) (* y 0.5f)) x)) xs)"),
        "error: the condition of `iterate-until` must be a bool or [bool]1, but it is float"
    );
    // the state keeps its type: no new type, no new length
    assert_eq!(
        ty("(mapGlb (lambda (x) (iterate M (lambda (y) (to-int y)) x)) xs)"),
        "error: the function of `iterate` inside a kernel must keep the state's type float, but it returns int"
    );
    assert_eq!(
        ty("(mapGlb (lambda (r) (iterate M (lambda (s) (mapSeq (lambda (x) x) (pad-clamp #1 #0 s))) r)) xss)"),
        "error: the function of `iterate` inside a kernel must keep the state's type [float]M, but it returns [float](M+1)"
    );
    // an array of run-time length (a filter result) is refused as not supported yet
    assert!(ty(
        "(mapGlb (lambda (r) (iterate-until #9 (lambda (p q) true) (lambda (s) s) (filterSeq (lambda (x) (> x 0.0f)) r))) xss)"
    )
    .ends_with("(an array of run-time length) is not supported yet"));
    // a literal count over an array is unrolled as before: the length may change each step
    assert_eq!(
        ty("(mapGlb (lambda (r) (iterate #2 (lambda (s) (mapSeq (lambda (x) x) (pad-clamp #1 #0 s))) r)) xss)"),
        "[[float](M+2)]N"
    );
}
