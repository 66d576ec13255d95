//! Programs written independently of the suite (issue 11, `bench/indep/`): rows of 1000 reduced
//! by a work-group (`rownorm`, `gemv_bias`: `wg-reduce-pad-*`), a dot product read as `float4`s
//! (`grid-reduce-v4-*`), a 5-point stencil, a reduction of a zip of three arrays and a batch of
//! small products. The variants the cost model ranks first at the sizes they are timed at (the
//! ones `lift tune --top 6` tries on the GPU) run on OpenCL at smaller sizes that keep the same
//! divisibility, and each equals the interpreter.

use crate::{interp_options, json_close, parse_json};

/// A program, its sizes when timed, its sizes when checked, and a description that one of its
/// variants at the timed sizes must have.
struct Case {
    name: &'static str,
    src: &'static str,
    large: &'static [(&'static str, i64)],
    small: &'static [(&'static str, i64)],
    expect: &'static str,
}

const CASES: [Case; 7] = [
    Case {
        name: "rownorm",
        src: include_str!("../../../../bench/indep/rownorm.lisp"),
        large: &[("R", 100_000), ("C", 1000)],
        small: &[("R", 32), ("C", 1000)],
        expect: "work-group reduction by 64",
    },
    Case {
        name: "gemv_bias",
        src: include_str!("../../../../bench/indep/gemv_bias.lisp"),
        large: &[("M", 10_000), ("N", 3000)],
        small: &[("M", 32), ("N", 3000)],
        expect: "work-group reduction by 128",
    },
    Case {
        name: "dot",
        src: include_str!("../../../../bench/indep/dot.lisp"),
        large: &[("N", 100_000_000)],
        small: &[("N", 600_064)],
        expect: "4-lane vector loads",
    },
    // the suite's sum: `float4`s too, padded with zero vectors to whole grid steps
    Case {
        name: "sum",
        src: include_str!("../../../../bench/cgo17/sum.lisp"),
        large: &[("N", 100_000_000)],
        small: &[("N", 4_000_000)],
        expect: "4-lane vector loads",
    },
    Case {
        name: "jacobi",
        src: include_str!("../../../../bench/indep/jacobi.lisp"),
        large: &[("H", 8192), ("W", 8192)],
        small: &[("H", 128), ("W", 256)],
        expect: "mapGlb1 8192 × mapGlb 2048",
    },
    Case {
        name: "zip3sum",
        src: include_str!("../../../../bench/indep/zip3sum.lisp"),
        large: &[("N", 100_000_000)],
        // a multiple of the chunks of 160000 that a two-kernel variant splits 10^8 into, and
        // not of a grid of 1056 × 256
        small: &[("N", 640_000)],
        expect: "4-lane vector loads",
    },
    Case {
        name: "bmm",
        src: include_str!("../../../../bench/indep/bmm.lisp"),
        large: &[("B", 4096), ("M", 32), ("K", 32), ("N", 32)],
        small: &[("B", 128), ("M", 32), ("K", 32), ("N", 32)],
        expect: "mapWrg2 over a batch of 4096",
    },
];

/// `n` eighths in [-1, 1] (exact sums in `float` at these sizes, whatever the order).
fn eighths(r: &mut ir::rng::XorShift, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| format!("{}", (r.below(17) as f64 - 8.0) / 8.0))
        .collect()
}

/// JSON of an array of eighths of the given dimensions (outermost first).
fn array(r: &mut ir::rng::XorShift, dims: &[usize]) -> String {
    match dims {
        [n] => format!("[{}]", eighths(r, *n).join(",")),
        [n, rest @ ..] => format!("[{}]", (0..*n).map(|_| array(r, rest)).collect::<Vec<_>>().join(",")),
        [] => "0.0".into(),
    }
}

/// The inputs of `name` at `sizes`, by parameter.
fn inputs(name: &str, sizes: &[(&str, i64)]) -> String {
    let s = |k: &str| {
        sizes
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| *v as usize)
            .expect("size")
    };
    let mut r = ir::rng::XorShift::new(name.len() as u64 + 17);
    let fields: Vec<(&str, Vec<usize>)> = match name {
        "rownorm" => vec![("a", vec![s("R"), s("C")])],
        "gemv_bias" => vec![("a", vec![s("M"), s("N")]), ("x", vec![s("N")]), ("b", vec![s("M")])],
        "dot" => vec![("xs", vec![s("N")]), ("ys", vec![s("N")])],
        "sum" => vec![("xs", vec![s("N")])],
        "jacobi" => vec![("g", vec![s("H") + 2, s("W") + 2])],
        "zip3sum" => vec![("a", vec![s("N")]), ("b", vec![s("N")]), ("c", vec![s("N")])],
        "bmm" => vec![
            ("as", vec![s("B"), s("M"), s("K")]),
            ("bs", vec![s("B"), s("K"), s("N")]),
        ],
        _ => unreachable!("a case"),
    };
    let body: Vec<String> = fields
        .iter()
        .map(|(p, dims)| format!("\"{p}\": {}", array(&mut r, dims)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

#[test]
fn the_independent_programs_variants_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    for case in &CASES {
        let prog = ir::parse(case.src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        let ropts = rewrite::Options {
            sizes: case.large.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            top_k: 6,
            ..rewrite::Options::default()
        };
        let ex = rewrite::explore(&prog, &info, &ropts).expect("explores");
        assert!(
            ex.variants.iter().any(|v| v.description.contains(case.expect)),
            "{}: no variant with `{}`:\n{ex}",
            case.name,
            case.expect
        );
        let given = lift::compile(case.src, &lift::Options::types_only()).expect("types");
        let data = vec![lift::data::DataSource::Json(
            inputs(case.name, case.small),
            format!("{}.json", case.name),
        )];
        let inputs = lift::data::load(&given.given, &data, &[]).expect("inputs");
        let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
        let want = parse_json(&want.json, "the interpreter's result");
        for v in &ex.variants {
            let c = lift::compile(
                &v.source,
                &lift::Options {
                    as_written: true,
                    ..lift::Options::default()
                },
            )
            .unwrap_or_else(|e| panic!("{}: {}\n{}", case.name, e.message(), v.source));
            let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
            let got = lift::run_compiled(&c, &inputs, &opts)
                .unwrap_or_else(|e| panic!("{}: {}\n{}", case.name, e.message(), v.description));
            let got = parse_json(&got.json, "the OpenCL result");
            assert!(
                json_close(&want, &got),
                "{} at {:?}: {}\nexpected {want}\ngot {got}",
                case.name,
                case.small,
                v.description
            );
        }
    }
}
