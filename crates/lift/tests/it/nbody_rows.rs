//! Several rows per work-item of a map over a reduction read in tiles (`reuse-tiles-T-bB`):
//! n-body and mri-q, whose every work-item folds a whole array staged tile by tile in local
//! memory. Each variant with rows per work-item that the rewriter derives equals the
//! interpreter on OpenCL, and its kernel reads the tile as whole vectors and keeps the rows'
//! accumulators in registers.

use crate::{json_close, parse_json};
use std::path::{Path, PathBuf};

fn repo(p: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("lift-nbody-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&path).expect("scratch folder");
        Scratch(path)
    }

    fn write(&self, name: &str, v: &serde_json::Value) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, v.to_string()).expect("writes data");
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Multiples of 1/8 in [-1, 1), from a fixed sequence.
fn eighths(seed: &mut u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((*seed >> 33) % 16) as f64 / 8.0 - 1.0
        })
        .collect()
}

/// `n` bodies on a lattice of spacing 3/4 with masses in w, a softening of 1 (no sum of
/// accelerations is dominated by rounding).
fn bodies(n: usize) -> serde_json::Value {
    let mut seed = 5;
    let pos: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mass = 0.25 + (i % 7) as f64 / 4.0;
            serde_json::json!([
                (i % 8) as f64 * 0.75,
                (i / 8 % 8) as f64 * 0.75,
                (i / 64) as f64 * 0.75,
                mass
            ])
        })
        .collect();
    let vel: Vec<serde_json::Value> = (0..n)
        .map(|_| {
            let v = eighths(&mut seed, 3);
            serde_json::json!([v[0], v[1], v[2], 0.0])
        })
        .collect();
    serde_json::json!({ "pos": pos, "vel": vel, "espSqr": 1.0, "deltaT": 0.125 })
}

fn samples(x: usize, k: usize) -> serde_json::Value {
    let mut seed = 9;
    let mut g =
        |n, scale: f64, add: f64| -> Vec<f64> { eighths(&mut seed, n).iter().map(|v| v * scale + add).collect() };
    // the phases stay within a few turns, where float32 sines are close to the interpreter's
    serde_json::json!({
        "x": g(x, 1.0, 0.0), "y": g(x, 1.0, 0.0), "z": g(x, 1.0, 0.0),
        "kx": g(k, 0.5, 0.0), "ky": g(k, 0.5, 0.0), "kz": g(k, 0.5, 0.0),
        "phiMag": g(k, 0.5, 1.0),
    })
}

/// The variants of `src` at `sizes` with `blocks` rows per work-item: (description, source).
fn rows_variants(src: &str, sizes: &[(&str, i64)], blocks: Vec<i64>) -> Vec<(String, String)> {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        reuse_tiles: vec![64],
        reuse_blocks: blocks,
        top_k: 16,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    ex.variants
        .into_iter()
        .filter(|v| v.description.contains(" rows each, "))
        .map(|v| (v.description, v.source))
        .collect()
}

fn run_as_written(src: &str, data: &str, device: Option<String>) -> Result<serde_json::Value, String> {
    let c = lift::compile(
        src,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .map_err(|e| e.message())?;
    let sources = lift::read_sources(&[data.to_string()]).map_err(|e| e.message())?;
    let inputs = lift::data::load(&c.given, &sources, &[]).map_err(|e| e.message)?;
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let got = lift::run_compiled(&c, &inputs, &opts).map_err(|e| e.message())?;
    Ok(parse_json(&got.json, "the OpenCL result"))
}

/// Every variant with `blocks` rows per work-item of `program` equals the interpreter.
fn rows_equal_the_interpreter(program: &str, sizes: &[(&str, i64)], data: serde_json::Value, blocks: i64) {
    let Some(device) = crate::opencl::device() else { return };
    let src = repo(program);
    let variants = rows_variants(&src, sizes, vec![blocks]);
    let want_rows = format!("{blocks} rows each");
    assert!(
        variants.iter().any(|(d, _)| d.contains(&want_rows)),
        "no variant with {want_rows}: {:?}",
        variants.iter().map(|(d, _)| d).collect::<Vec<_>>()
    );
    let scratch = Scratch::new(&format!("rows{blocks}"));
    let data = scratch.write("data.json", &data);
    let want = lift::run_files(&src, std::slice::from_ref(&data), &[], &crate::interp_options())
        .unwrap_or_else(|e| panic!("{}", e.render(program, &src)));
    let want = parse_json(&want.json, "the interpreter's result");
    for (description, source) in &variants {
        let got = run_as_written(source, &data, device.clone())
            .unwrap_or_else(|e| panic!("{description} fails on OpenCL: {e}\n{source}"));
        assert!(
            json_close(&want, &got),
            "{description} differs from the interpreter:\n{source}"
        );
    }
}

#[test]
fn nbody_two_rows_per_work_item_equal_the_interpreter() {
    rows_equal_the_interpreter("bench/cgo17/nbody.lisp", &[("N", 512)], bodies(512), 2);
}

#[test]
fn nbody_four_rows_per_work_item_equal_the_interpreter() {
    rows_equal_the_interpreter("bench/cgo17/nbody.lisp", &[("N", 512)], bodies(512), 4);
}

#[test]
fn mriq_two_rows_per_work_item_equal_the_interpreter() {
    rows_equal_the_interpreter("bench/cgo17/mriq.lisp", &[("X", 512), ("K", 128)], samples(512, 128), 2);
}

/// The kernel of n-body with two rows per work-item at the benchmark size: the tile in local
/// memory is an array of `float4` read whole, and the two rows' accumulators and positions
/// are registers (no private array left), each element of the tile folded into both.
#[test]
fn nbody_rows_kernel_reads_the_tile_as_vectors_into_register_accumulators() {
    let variants = rows_variants(&repo("bench/cgo17/nbody.lisp"), &[("N", 131072)], vec![2]);
    let (description, source) = variants
        .iter()
        .find(|(d, _)| d.contains("mapLcl 128, 2 rows each"))
        .unwrap_or_else(|| panic!("no variant of groups of 128 with 2 rows each: {variants:?}"));
    let c = lift::compile(
        source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{description}: {}", e.message()));
    let cl = c.text(lift::Emit::Cl).expect("OpenCL text");
    assert!(cl.contains("local float4 v_lt_1[64];"), "{cl}");
    assert!(!cl.contains("v_lt_1)"), "a vload of the tile is left:\n{cl}");
    assert!(!cl.contains("float v_pacc") && !cl.contains("float4 v_pacc_1["), "{cl}");
    assert!(
        cl.contains("float4 v_pacc_1_1;") && cl.contains("float4 v_pacc_1_2;"),
        "{cl}"
    );
    // the loop over the tile reads its element once for both rows
    let inner = cl
        .split("for (int v_i_2 = 0; v_i_2 < 64; v_i_2 += 1) {")
        .nth(1)
        .expect("the tile loop");
    let inner = inner.split("v_lnxt_1").next().expect("the loop body");
    assert_eq!(inner.matches("sqrt(").count(), 2, "{inner}");
    assert!(
        !inner.contains("v_pos"),
        "the rows' positions are read in the loop:\n{inner}"
    );
}
