//! Whole-array reductions of a map written independently of the suite (issue 11): `reduce f z
//! (map g xs)` and `reduce + 0 (map h (zip xs ys))` with `h` not a product of components get the
//! one-launch grid reduction (`grid-reduce-*`), `g` applied to the elements read only: the
//! padding lanes are marked and skipped, so a `g` that is not zero at zero (`x + 1`) still
//! gives the interpreter's result at lengths that leave padding.

use crate::{interp_options, json_close, parse_json};

/// Lengths around the edges of the grid's padding and of a work-group, and one of more than two
/// rows of the grid (1056 × 256 at the size chosen).
const LENGTHS: [usize; 4] = [1, 255, 257, 600_001];

/// The programs: a name, the source, and the parameters read.
const PROGRAMS: [(&str, &str, &[&str]); 3] = [
    ("sumsq", include_str!("../../../../bench/indep/sumsq.lisp"), &["xs"]),
    (
        "sum_plus_one",
        "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f (map (lambda (x) (+ x 1.0f)) xs))))",
        &["xs"],
    ),
    (
        "sqdist",
        "(lift (N) ((array-type float N) (array-type float N)) (lambda (xs ys) \
         (reduce + 0.0f (map (lambda (p) (* (- (get #0 p) (get #1 p)) (+ 1.0f (get #1 p)))) (zip xs ys)))))",
        &["xs", "ys"],
    ),
];

/// The cost model's best variant at `N = 10^8`: its description and source.
fn best_at_large(src: &str) -> (String, String) {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: [("N".to_string(), 100_000_000)].into_iter().collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let v = rewrite::explore(&prog, &info, &opts)
        .expect("explores")
        .variants
        .into_iter()
        .next()
        .expect("a variant");
    (v.description, v.source)
}

/// `n` eighths in [-1, 1]: every partial sum of the programs' terms (64ths) at these lengths
/// stays below 2^24 64ths, so it is exact in `float` whatever the order.
fn eighths(n: usize, seed: u64) -> String {
    let mut r = ir::rng::XorShift::new(seed);
    let xs: Vec<String> = (0..n)
        .map(|_| format!("{}", (r.below(17) as f64 - 8.0) / 8.0))
        .collect();
    format!("[{}]", xs.join(", "))
}

#[test]
fn the_best_reduction_of_a_map_is_one_launch_and_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    for (name, src, params) in PROGRAMS {
        let (description, variant) = best_at_large(src);
        assert!(description.contains("one launch"), "{name}: {description}\n{variant}");
        let c = lift::compile(
            &variant,
            &lift::Options {
                as_written: true,
                ..lift::Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        assert_eq!(c.plan.as_ref().map(|p| p.kernels.len()), Some(1), "{name}: {variant}");
        let given = lift::compile(src, &lift::Options::types_only()).expect("types");
        for (i, n) in LENGTHS.into_iter().enumerate() {
            let fields: Vec<String> = params
                .iter()
                .enumerate()
                .map(|(k, p)| format!("\"{p}\": {}", eighths(n, 11 + 7 * i as u64 + k as u64)))
                .collect();
            let data = vec![lift::data::DataSource::Json(
                format!("{{{}}}", fields.join(", ")),
                format!("{name}{n}.json"),
            )];
            let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
            let got =
                lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("{name} N={n}: {}", e.message()));
            let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
            let (want, got) = (
                parse_json(&want.json, "the interpreter's result"),
                parse_json(&got.json, "the OpenCL result"),
            );
            assert!(
                json_close(&want, &got),
                "{name} N={n}: expected {want}, got {got}\n{variant}"
            );
        }
    }
}

/// The kernel of the one-launch sum of squares at a length known only at run time, as
/// `cl@indep_grid__sumsq.snap`.
#[test]
fn one_launch_sumsq_kernel() {
    let src = PROGRAMS[0].1;
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        top_k: 1,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let v = &ex.variants[0];
    assert!(v.description.contains("one launch"), "{ex}");
    let c = lift::compile(
        &v.source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .expect("compiles");
    let cl = c.text(lift::Emit::Cl).expect("OpenCL");
    insta::with_settings!({
        snapshot_suffix => "indep_grid__sumsq",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "lift explore of bench/indep/sumsq.lisp at any N, variant 0, then --emit cl",
    }, {
        insta::assert_snapshot!("cl", format!(";; {}\n{cl}", v.description));
    });
}
