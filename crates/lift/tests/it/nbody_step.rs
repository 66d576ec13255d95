//! n-body's inner step after the kernel-AST passes of issue 11 (`gen/inline.rs`,
//! `gen/lanes.rs`): the accumulation `acc + r * s` is one C expression (so OpenCL may contract
//! it into fused multiply-adds), the accumulator's w lane, which `advance` never reads, is not
//! stored (so its arithmetic is dead), and the distance's constant-zero lane leaves `dot`.
//! Every variant the rewriter derives equals the interpreter on OpenCL, with and without a w
//! lane that the result reads.

use crate::{json_close, parse_json};
use std::path::{Path, PathBuf};

fn repo(p: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// n-body whose distance keeps its w lane (the difference of the masses) and whose velocity
/// adds the acceleration's w lane: every lane of the accumulator reaches the result.
fn nbody_all_lanes() -> String {
    let src = repo("bench/cgo17/nbody.lisp");
    let out = src
        .replace("(let r (xyz (- pj pi))", "(let r (- pj pi)")
        .replace("(+ vel (xyz (* acc dt)))", "(+ vel (* acc dt))");
    assert_ne!(out, src, "the n-body program changed: update this test");
    out
}

fn variants(src: &str, n: i64) -> Vec<(String, String)> {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: [("N".to_string(), n)].into_iter().collect(),
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    ex.variants.into_iter().map(|v| (v.description, v.source)).collect()
}

fn kernel_text(source: &str) -> String {
    let c = lift::compile(
        source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}", e.message()));
    c.text(lift::Emit::Cl).expect("OpenCL text")
}

/// The cost model's n-body kernel at the benchmark size: each row's step is one statement
/// accumulating the product into lanes 0 to 2, and each accumulator is stored with w = 0.
#[test]
fn nbody_step_is_one_multiply_add_per_lane_without_the_w_lane() {
    let vs = variants(&repo("bench/cgo17/nbody.lisp"), 131072);
    let (description, source) = vs.first().expect("a variant");
    let cl = kernel_text(source);
    let step = cl
        .split("for (int v_i_2 = 0;")
        .nth(1)
        .and_then(|s| s.split("v_lnxt_1[").next())
        .unwrap_or_else(|| panic!("{description}: no loop over the tile:\n{cl}"));
    let rows = step.matches("sqrt(").count();
    assert!(rows >= 1, "{description}:\n{step}");
    let lines: Vec<&str> = step.lines().map(str::trim).collect();
    let steps = lines
        .iter()
        .filter(|l| l.contains("acc_1") && l.contains(" + v_r_") && l.contains(" * (v_inv_"))
        .count();
    assert_eq!(
        steps, rows,
        "{description}: the product is not in the accumulation:\n{step}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("float4 ") && l.contains("= v_r_")),
        "{description}: temporaries are left:\n{step}"
    );
    assert_eq!(
        step.matches(".s012, v_r_").count(),
        rows,
        "{description}: dot keeps the w lane:\n{step}"
    );
    let stores: Vec<&str> = cl
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("v_lnxt_1["))
        .collect();
    assert!(!stores.is_empty(), "{cl}");
    for st in stores {
        assert!(
            st.ends_with(".s2, 0.0f);"),
            "{description}: the accumulator is stored with its w lane: {st}"
        );
    }
}

/// With every lane read, no store drops one.
#[test]
fn nbody_a_lane_the_result_reads_is_kept() {
    let vs = variants(&nbody_all_lanes(), 131072);
    let (description, source) = vs.first().expect("a variant");
    let cl = kernel_text(source);
    assert!(
        !cl.contains("v_acc_1.s2, 0.0f)"),
        "{description}: a lane is dropped:\n{cl}"
    );
    assert!(!cl.contains(".s012"), "{description}:\n{cl}");
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bodies on a lattice with masses in w and velocities with a non-zero w (so that a dropped
/// lane shows).
fn bodies(n: usize) -> serde_json::Value {
    let pos: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!([
                (i % 8) as f64 * 0.75,
                (i / 8 % 8) as f64 * 0.75,
                (i / 64) as f64 * 0.75,
                0.25 + (i % 7) as f64 / 4.0
            ])
        })
        .collect();
    let vel: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!([
                (i % 3) as f64 / 4.0,
                (i % 5) as f64 / 8.0 - 0.25,
                0.5,
                0.125 * (i % 4) as f64
            ])
        })
        .collect();
    serde_json::json!({ "pos": pos, "vel": vel, "espSqr": 1.0, "deltaT": 0.125 })
}

fn variants_equal_the_interpreter(tag: &str, src: &str) {
    let Some(device) = crate::opencl::device() else { return };
    let n = 512;
    let dir = std::env::temp_dir().join(format!("lift-nbody-step-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let scratch = Scratch(dir);
    let data = scratch.0.join("data.json");
    std::fs::write(&data, bodies(n).to_string()).expect("writes data");
    let data = data.display().to_string();
    let want = lift::run_files(src, std::slice::from_ref(&data), &[], &crate::interp_options())
        .unwrap_or_else(|e| panic!("{}", e.render("nbody", src)));
    let want = parse_json(&want.json, "the interpreter's result");
    let vs = variants(src, n as i64);
    assert!(vs.len() >= 3, "{vs:?}");
    for (description, source) in &vs {
        let c = lift::compile(
            source,
            &lift::Options {
                as_written: true,
                ..lift::Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("{description}: {}", e.message()));
        let sources = lift::read_sources(std::slice::from_ref(&data)).expect("reads data");
        let inputs = lift::data::load(&c.given, &sources, &[]).expect("loads data");
        let opts = lift::RunOptions {
            device: device.clone(),
            time: false,
            interp: false,
        };
        let got = lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("{description}: {}", e.message()));
        let got = parse_json(&got.json, "the OpenCL result");
        assert!(
            json_close(&want, &got),
            "{description} differs from the interpreter:\n{source}"
        );
    }
}

#[test]
fn nbody_variants_equal_the_interpreter() {
    variants_equal_the_interpreter("xyz", &repo("bench/cgo17/nbody.lisp"));
}

#[test]
fn nbody_variants_reading_every_lane_equal_the_interpreter() {
    variants_equal_the_interpreter("xyzw", &nbody_all_lanes());
}
