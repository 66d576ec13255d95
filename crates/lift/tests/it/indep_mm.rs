//! Matrix products written independently of the suite (issue 11): without `join`, with `B`
//! given transposed (`bench/indep/mm_nt.lisp`), with `transpose` on both sides and the dot
//! product bound by `let` (`bench/indep/mm_tn.lisp`). The cost model's best variant at 4096³ is
//! the register-blocked product (`reg-block-rows-*`), and on an OpenCL device it equals the
//! interpreter.

use crate::{interp_options, json_close, parse_json};

const PROGRAMS: [(&str, &str); 2] = [
    ("mm_nt", include_str!("../../../../bench/indep/mm_nt.lisp")),
    ("mm_tn", include_str!("../../../../bench/indep/mm_tn.lisp")),
];

/// The cost model's best variant at 4096³: its description and source.
fn best_at_large(src: &str) -> (String, String) {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: ["M", "K", "N"].iter().map(|n| (n.to_string(), 4096)).collect(),
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

/// A `rows × cols` matrix of eighths in [-1, 1] as JSON.
fn matrix(rows: usize, cols: usize, seed: u64) -> String {
    let mut r = ir::rng::XorShift::new(seed);
    let rows: Vec<String> = (0..rows)
        .map(|_| {
            let xs: Vec<String> = (0..cols)
                .map(|_| format!("{}", (r.below(17) as f64 - 8.0) / 8.0))
                .collect();
            format!("[{}]", xs.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

#[test]
fn the_best_mm_of_other_forms_is_register_blocked_and_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    // two tiles of rows and of columns, three steps of K
    let (m, k, n) = (256, 48, 256);
    for (name, src) in PROGRAMS {
        let (description, variant) = best_at_large(src);
        assert!(
            description.contains("block in registers"),
            "{name}: {description}\n{variant}"
        );
        let c = lift::compile(
            &variant,
            &lift::Options {
                as_written: true,
                ..lift::Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        let json = match name {
            "mm_nt" => format!("{{\"a\": {}, \"bt\": {}}}", matrix(m, k, 3), matrix(n, k, 4)),
            _ => format!("{{\"at\": {}, \"b\": {}}}", matrix(k, m, 5), matrix(k, n, 6)),
        };
        let data = vec![lift::data::DataSource::Json(json, format!("{name}.json"))];
        let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
        let got = lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        let given = lift::compile(src, &lift::Options::types_only()).expect("types");
        let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
        let (want, got) = (
            parse_json(&want.json, "the interpreter's result"),
            parse_json(&got.json, "the OpenCL result"),
        );
        assert!(json_close(&want, &got), "{name}: the OpenCL result differs\n{variant}");
    }
}

/// Sizes the tiles do not divide: the register-blocked product does not apply, and the best
/// variant (another mapping) still equals the interpreter.
#[test]
fn mm_nt_at_sizes_the_tiles_do_not_divide_still_runs() {
    let Some(device) = crate::opencl::device() else { return };
    let src = PROGRAMS[0].1;
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let (m, k, n) = (100, 36, 70);
    let opts = rewrite::Options {
        sizes: [("M", m), ("K", k), ("N", n)]
            .iter()
            .map(|(s, v)| (s.to_string(), *v as i64))
            .collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let v = rewrite::explore(&prog, &info, &opts)
        .expect("explores")
        .variants
        .into_iter()
        .next()
        .expect("a variant");
    assert!(!v.description.contains("block in registers"), "{}", v.description);
    let c = lift::compile(
        &v.source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .expect("compiles");
    let json = format!("{{\"a\": {}, \"bt\": {}}}", matrix(m, k, 7), matrix(n, k, 8));
    let data = vec![lift::data::DataSource::Json(json, "mm_nt_odd.json".into())];
    let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
    let run = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let got = lift::run_compiled(&c, &inputs, &run).unwrap_or_else(|e| panic!("{}", e.message()));
    let given = lift::compile(src, &lift::Options::types_only()).expect("types");
    let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
    let (want, got) = (parse_json(&want.json, "interpreter"), parse_json(&got.json, "OpenCL"));
    assert!(json_close(&want, &got), "{}", v.source);
}

/// The kernel of the register-blocked `bench/indep/mm_nt.lisp`, as `cl@indep_mm__mm_nt.snap`.
#[test]
fn register_blocked_mm_nt_kernel() {
    let (description, variant) = best_at_large(PROGRAMS[0].1);
    let c = lift::compile(
        &variant,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .expect("compiles");
    let cl = c.text(lift::Emit::Cl).expect("OpenCL");
    insta::with_settings!({
        snapshot_suffix => "indep_mm__mm_nt",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "lift explore of bench/indep/mm_nt.lisp at M=K=N=4096, variant 0, then --emit cl",
    }, {
        insta::assert_snapshot!("cl", format!(";; {description}\n{cl}"));
    });
}
