//! The single-pass `filterGlb` (one kernel, decoupled look-back, a consuming or producing map
//! fused) and the device-side check of its result's length: every form of filter, at the sizes
//! where its tiles begin and end (4096 elements on a CPU, scanned in parts of 2048; 8192 on a
//! GPU, parts of 4096, read in chunks of 4), at sizes over more tiles than the look-back reads
//! at once, at selectivities 0 %, 100 %, alternating and random, equals the reference
//! interpreter on the OpenCL device, in the device's own shape and in the GPU's (forced with
//! `LIFT_GPU_PATHS=1`, so that a CPU driver tests it too); so do random sizes and predicates
//! (proptest).

use crate::opencl::device;
use crate::{examples_dir, interp_options, json_close, parse_json};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Thesis program 6.1: the map over the filter's result is fused into its store.
const THESIS: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (toGlobal (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))
    (mapGlb (lambda (x) (* x 2.0f)) ys)))))";

const ALONE: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))))";

/// The map producing the filter's input is fused into its read.
const PRODUCER: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (unpack ys (toGlobal (filterGlb (lambda (x) (> x 1.0f)) (toGlobal (mapGlb (lambda (x) (+ x 0.5f)) xs))))
    (mapGlb (lambda (x) (* x 2.0f)) ys))))";

/// High level: `map f (filter p (map g xs))`, lowered by the rewriting stage.
const HIGH_LEVEL: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (map (lambda (x) (* x 2.0f)) (filter (lambda (x) (> x 1.0f)) (map (lambda (x) (+ x 0.5f)) xs)))))";

const TWO_FILTERS: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.25f)) xs))
    (unpack zs (toGlobal (filterGlb (lambda (x) (< x 0.75f)) ys))
      (mapGlb (lambda (x) (* x 2.0f)) zs)))))";

/// The result is used twice, so the map is not fused.
const ZIPPED_WITH_ITS_MAP: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))
    (zip ys (toGlobal (mapGlb (lambda (x) (* x 3.0f)) ys))))))";

const REDUCED: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))
    (toGlobal (mapSeq (lambda (s) s) (reduceSeq + 0.0f ys))))))";

const SEQ_IN_MAPGLB: &str = "(lift (N) ((array-type float N)) (lambda (xs)
  (mapGlb (lambda (row) (toGlobal (filterSeq (lambda (x) (> x 0.5f)) row))) (split #16 xs))))";

const TUPLES: &str = "(lift (N) ((array-type float N) (array-type int N)) (lambda (xs ys)
  (unpack zs (toGlobal (filterGlb (lambda (p) (> (get #1 p) 3)) (zip xs ys)))
    (mapGlb (lambda (p) (+ (get #0 p) 1.0f)) zs))))";

const TUPLES_ALONE: &str = "(lift (N) ((array-type float N) (array-type int N)) (lambda (xs ys)
  (toGlobal (filterGlb (lambda (p) (> (get #1 p) 3)) (zip xs ys)))))";

/// Tuples holding rows, kept as a struct of arrays (one compacted buffer per component).
const TUPLE_ROWS: &str = "(lift (N) ((array-type float N) (array-type float (* 2 N))) (lambda (xs ys)
  (toGlobal (filterGlb (lambda (p) (> (get #0 p) 0.5f)) (zip xs (split #2 ys))))))";

const VECTORS: &str = "(lift (N) ((array-type (vector-type float 4) N)) (lambda (xs)
  (toGlobal (filterGlb (lambda (v) (> (dot v v) 10.0f)) xs))))";

/// Sizes around the CPU's tiles (4096 elements, scanned in two parts of 2048): one element, a
/// part less one and more one, a tile less one, a tile, a tile and one, two tiles and one.
const SIZES: &[usize] = &[1, 3, 2047, 2049, 4095, 4096, 4097, 8193];

/// Sizes around the GPU's tiles (8192 elements, parts of 4096, a round of 1024, chunks of 4):
/// a chunk and part of one, a round and one, a part less one and more two, a tile less one,
/// a tile, a tile and one, two tiles and three.
const GPU_SIZES: &[usize] = &[1, 6, 1025, 4095, 4098, 8191, 8192, 8193, 16387];

/// Tiles of the filter kernel (`gen/filter.rs`: `CPU_SHAPE`, `GPU_SHAPE`) and the look-back's
/// window (`LOOKBACK`), for sizes that make the window slide.
const TILE: usize = 4096;
const GPU_TILE: usize = 8192;
const WINDOW: usize = 32;

/// A small deterministic generator for the inputs.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

#[derive(Clone, Copy, Debug)]
enum Kept {
    None,
    All,
    Alternating,
    Random,
}

/// Floats in `[0, 1)` on a grid of 1/16 whose share above 0.5 is set by `kept`.
fn floats(n: usize, kept: Kept, r: &mut Lcg) -> Vec<f64> {
    (0..n)
        .map(|i| match kept {
            Kept::None => 0.25,
            Kept::All => 0.75,
            Kept::Alternating => [0.25, 0.75][i % 2],
            Kept::Random => r.next(16) as f64 / 16.0,
        })
        .collect()
}

static FILES: AtomicUsize = AtomicUsize::new(0);

/// Runs `src` on `data` with the interpreter and, through the `lift` binary with
/// `LIFT_GPU_PATHS=1`, on the device in the GPU's shape; `Err` says how they differ.
fn same_as_interpreter_gpu_shape(src: &str, data: &Value, device: &Option<String>) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("lift-it-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let k = FILES.fetch_add(1, Ordering::Relaxed);
    let (path, prog) = (dir.join(format!("{k}.json")), dir.join(format!("{k}.lisp")));
    std::fs::write(&path, data.to_string()).map_err(|e| e.to_string())?;
    std::fs::write(&prog, src).map_err(|e| e.to_string())?;
    let files = vec![path.display().to_string()];
    let reference = lift::run_files(src, &files, &[], &interp_options())
        .map_err(|e| format!("interpreter: {}", e.render("filter test", src)))?;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lift"));
    cmd.arg("run").arg(&prog).arg("--data").arg(&path);
    if let Some(d) = device {
        cmd.args(["--device", d]);
    }
    let out = cmd
        .env(host_runner::GPU_PATHS_VAR, "1")
        .output()
        .map_err(|e| format!("cannot run lift: {e}"))?;
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&prog);
    if !out.status.success() {
        return Err(format!("lift run failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let (want, got) = (
        parse_json(&reference.json, "the interpreter's result"),
        parse_json(&String::from_utf8_lossy(&out.stdout), "the OpenCL result"),
    );
    if !json_close(&want, &got) {
        let show = |v: &Value| v.to_string().chars().take(300).collect::<String>();
        return Err(format!(
            "interpreter {}\n OpenCL (GPU shape) {}",
            show(&want),
            show(&got)
        ));
    }
    Ok(())
}

/// Runs `src` on `data` with the interpreter and on the device; `Err` says how they differ.
fn same_as_interpreter(src: &str, data: &Value, device: &Option<String>) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("lift-it-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!("{}.json", FILES.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&path, data.to_string()).map_err(|e| e.to_string())?;
    let files = vec![path.display().to_string()];
    let reference = lift::run_files(src, &files, &[], &interp_options())
        .map_err(|e| format!("interpreter: {}", e.render("filter test", src)))?;
    let opts = lift::RunOptions {
        device: device.clone(),
        time: false,
        interp: false,
    };
    let res =
        lift::run_files(src, &files, &[], &opts).map_err(|e| format!("OpenCL: {}", e.render("filter test", src)))?;
    let _ = std::fs::remove_file(&path);
    let (want, got) = (
        parse_json(&reference.json, "the interpreter's result"),
        parse_json(&res.json, "the OpenCL result"),
    );
    if !json_close(&want, &got) {
        let show = |v: &Value| v.to_string().chars().take(300).collect::<String>();
        return Err(format!("interpreter {}\n     OpenCL {}", show(&want), show(&got)));
    }
    Ok(())
}

#[test]
fn every_filter_form_at_tile_edges_equals_the_interpreter() {
    let Some(device) = device() else { return };
    let mut r = Lcg(7);
    let mut failures = vec![];
    let float_programs = [
        ("thesis 6.1", THESIS),
        ("filterGlb alone", ALONE),
        ("map into filter", PRODUCER),
        ("high-level map-filter-map", HIGH_LEVEL),
        ("two filters", TWO_FILTERS),
        ("zipped with its map", ZIPPED_WITH_ITS_MAP),
        ("reduced", REDUCED),
    ];
    for &n in SIZES {
        for kept in [Kept::None, Kept::All, Kept::Alternating, Kept::Random] {
            let xs = floats(n, kept, &mut r);
            for (name, src) in float_programs {
                let data = json!({ "xs": xs });
                if let Err(e) = same_as_interpreter(src, &data, &device) {
                    failures.push(format!("{name}, N = {n}, {kept:?} kept: {e}"));
                }
            }
        }
        let ys: Vec<u64> = (0..n).map(|_| r.next(8)).collect();
        let xs = floats(n, Kept::Random, &mut r);
        for (name, src) in [("tuples", TUPLES), ("tuples alone", TUPLES_ALONE)] {
            if let Err(e) = same_as_interpreter(src, &json!({ "xs": xs, "ys": ys }), &device) {
                failures.push(format!("{name}, N = {n}: {e}"));
            }
        }
        let rows = floats(2 * n, Kept::Random, &mut r);
        if let Err(e) = same_as_interpreter(TUPLE_ROWS, &json!({ "xs": xs, "ys": rows }), &device) {
            failures.push(format!("tuples holding rows, N = {n}: {e}"));
        }
        let vs: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..4).map(|_| r.next(17) as f64 / 2.0 - 4.0).collect())
            .collect();
        if let Err(e) = same_as_interpreter(VECTORS, &json!({ "xs": vs }), &device) {
            failures.push(format!("vectors, N = {n}: {e}"));
        }
    }
    for rows in [1, 127, 129] {
        let xs = floats(16 * rows, Kept::Random, &mut r);
        if let Err(e) = same_as_interpreter(SEQ_IN_MAPGLB, &json!({ "xs": xs }), &device) {
            failures.push(format!("filterSeq in mapGlb, {rows} rows: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// More tiles than the look-back's window holds: the window slides (twice, and by part of a
/// window where a tile before it has published nothing yet), and sums aggregates across its
/// edges; every selectivity, with and without the fused map.
#[test]
fn look_back_window_slides_over_many_tiles() {
    let Some(device) = device() else { return };
    let mut r = Lcg(11);
    let mut failures = vec![];
    for n in [(2 * WINDOW + 3) * TILE + 5, (WINDOW + 1) * TILE] {
        for kept in [Kept::None, Kept::All, Kept::Random] {
            let xs = floats(n, kept, &mut r);
            for (name, src) in [("thesis 6.1", THESIS), ("filterGlb alone", ALONE)] {
                if let Err(e) = same_as_interpreter(src, &json!({ "xs": xs }), &device) {
                    failures.push(format!("{name}, N = {n}, {kept:?} kept: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The GPU's shape (vector loads of chunks, 16-bit counts, prefetch), run on whatever device
/// the tests use: every filter form at its tile edges, and over more tiles than the window.
#[test]
fn gpu_shape_at_its_tile_edges_equals_the_interpreter() {
    let Some(device) = device() else { return };
    let mut r = Lcg(13);
    let mut failures = vec![];
    let float_programs = [
        ("thesis 6.1", THESIS),
        ("filterGlb alone", ALONE),
        ("map into filter", PRODUCER),
        ("two filters", TWO_FILTERS),
        ("reduced", REDUCED),
    ];
    for &n in GPU_SIZES {
        for kept in [Kept::None, Kept::All, Kept::Alternating, Kept::Random] {
            let xs = floats(n, kept, &mut r);
            for (name, src) in float_programs {
                if let Err(e) = same_as_interpreter_gpu_shape(src, &json!({ "xs": xs }), &device) {
                    failures.push(format!("{name}, N = {n}, {kept:?} kept: {e}"));
                }
            }
        }
        let ys: Vec<u64> = (0..n).map(|_| r.next(8)).collect();
        let xs = floats(n, Kept::Random, &mut r);
        if let Err(e) = same_as_interpreter_gpu_shape(TUPLES, &json!({ "xs": xs, "ys": ys }), &device) {
            failures.push(format!("tuples, N = {n}: {e}"));
        }
        let rows = floats(2 * n, Kept::Random, &mut r);
        if let Err(e) = same_as_interpreter_gpu_shape(TUPLE_ROWS, &json!({ "xs": xs, "ys": rows }), &device) {
            failures.push(format!("tuples holding rows, N = {n}: {e}"));
        }
        let vs: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..4).map(|_| r.next(17) as f64 / 2.0 - 4.0).collect())
            .collect();
        if let Err(e) = same_as_interpreter_gpu_shape(VECTORS, &json!({ "xs": vs }), &device) {
            failures.push(format!("vectors, N = {n}: {e}"));
        }
    }
    let n = (WINDOW + 2) * GPU_TILE + 7;
    for kept in [Kept::All, Kept::Random] {
        let xs = floats(n, kept, &mut r);
        if let Err(e) = same_as_interpreter_gpu_shape(THESIS, &json!({ "xs": xs }), &device) {
            failures.push(format!("thesis 6.1, N = {n}, {kept:?} kept: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Issue 15: `split #4` of a filter result of 9 elements fails on the device with one message
/// naming both places; 8 elements run.
#[test]
fn split_of_a_filter_result_is_checked_on_the_device() {
    let Some(device) = device() else { return };
    let path = examples_dir().join("errors/filter_split_count.lisp");
    let src = std::fs::read_to_string(&path).expect("the example");
    let data = vec![examples_dir()
        .join("errors/filter_split_count.json")
        .display()
        .to_string()];
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    match lift::run_files(&src, &data, &[], &opts) {
        Ok(res) => panic!("ran and gave {}", res.json),
        Err(e) => {
            let message = e.message();
            let want = "the result of filterGlb has 9 elements, not a multiple of 4 as split #4 needs";
            assert!(message.contains(want), "no `{want}` in: {message}");
            let text = e.render("filter_split_count.lisp", &src);
            for needle in [
                "filter_split_count.lisp:11:59",
                "filter_split_count.lisp:10:26",
                "kept 9 elements",
            ] {
                assert!(text.contains(needle), "no `{needle}` in:\n{text}");
            }
        }
    }
    let ok = std::fs::read_to_string(examples_dir().join("filter_split.lisp")).expect("the example");
    let data = vec![examples_dir().join("filter_split.json").display().to_string()];
    lift::run_files(&ok, &data, &[], &opts).unwrap_or_else(|e| panic!("{}", e.render("filter_split.lisp", &ok)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random lengths, thresholds, data and a fused map: the device equals the interpreter.
    #[test]
    fn random_filters_equal_the_interpreter(n in 1usize..9000, threshold in 0u32..18, seed in any::<u64>(), modulus in 1u32..5) {
        let Some(device) = device() else { return Ok(()) };
        let mut r = Lcg(seed);
        let xs: Vec<f64> = (0..n).map(|_| r.next(16) as f64 / 16.0).collect();
        let t = f64::from(threshold) / 16.0;
        let src = format!(
            "(lift (N) ((array-type float N)) (lambda (xs)
              (unpack ys (toGlobal (filterGlb (lambda (x) (> x {t:?}f)) xs))
                (mapGlb (lambda (x) (+ (* x 2.0f) 1.0f)) ys))))"
        );
        prop_assert!(same_as_interpreter(&src, &json!({ "xs": xs }), &device).is_ok(), "{src}");
        let ints: Vec<u64> = (0..n).map(|_| r.next(100)).collect();
        let src = format!(
            "(lift (N) ((array-type int N)) (lambda (xs)
              (toGlobal (filterGlb (lambda (x) (= (% x {modulus}) 0)) xs))))"
        );
        let res = same_as_interpreter(&src, &json!({ "xs": ints }), &device);
        prop_assert!(res.is_ok(), "{}: {:?}", src, res);
    }
}

/// `--emit plan` says which loads the filter kernel makes on which kind of device.
#[test]
fn the_plan_names_the_filters_choice_by_device() {
    let compiled = lift::compile(THESIS, &lift::Options::default()).expect("compiles");
    let plan = compiled.plan.expect("a kernel plan").describe();
    assert!(
        plan.contains("filterGlb: on a GPU (LIFT_GPU = 1) tiles of 8192 elements, each work-item reading 4 consecutive elements a round in one vector load, its kept values gathered in order in local memory and stored by consecutive work-items, the next tile's ticket and loads issued before the look-back; elsewhere tiles of 4096"),
        "{plan}"
    );
}

/// The kept values are gathered in local memory only where the device's local memory holds a
/// tile of them beside the scan's arrays; elsewhere each is stored in place, and the plan says
/// why.
#[test]
fn the_plan_names_where_kept_values_are_gathered() {
    let plan_with = |bytes: u64| {
        let opts = lift::Options {
            work_group_limit: Some(codegen_opencl::WorkGroupLimit::default().with_local_mem(bytes)),
            ..lift::Options::default()
        };
        let compiled = lift::compile(THESIS, &opts).expect("compiles");
        compiled.plan.expect("a kernel plan").describe()
    };
    let roomy = plan_with(48 * 1024);
    assert!(
        roomy.contains("its kept values gathered in order in local memory"),
        "{roomy}"
    );
    let small = plan_with(32 * 1024);
    assert!(
        small.contains("the next tile loaded before this one is stored (kept values stored in place: gathering them takes 38496 bytes of local memory, the device has 32768)"),
        "{small}"
    );
}

/// Built for its size, a filter whose kept values are not gathered in local memory (tuples
/// here) takes the GPU shape without the prefetch from 2^25 elements (fewer registers, more
/// groups resident) and says so, a smaller one keeps it; one gathering them (program 6.1)
/// loads the next tile before its look-back at every size.
#[test]
fn the_plan_names_the_filters_choice_by_size() {
    let plan_at = |src: &str, n: i64| {
        let opts = lift::Options {
            sizes: [("N".to_string(), n)].into_iter().collect(),
            specialise: true,
            ..lift::Options::default()
        };
        let compiled = lift::compile(src, &opts).expect("compiles");
        compiled.plan.expect("a kernel plan").describe()
    };
    let large = plan_at(TUPLES_ALONE, 1 << 25);
    assert!(
        large.contains(
            "the next tile not loaded early (at least 33554432 elements: fewer registers, more groups resident)"
        ),
        "{large}"
    );
    let small = plan_at(TUPLES_ALONE, (1 << 25) - 1);
    assert!(
        small.contains("the next tile loaded before this one is stored"),
        "{small}"
    );
    let gathered = plan_at(THESIS, (1 << 25) - 1);
    assert!(
        gathered.contains("the next tile's ticket and loads issued before the look-back"),
        "{gathered}"
    );
}

/// Under Oclgrind (`LIFT_OCLGRIND=1`), filters of several tiles in both shapes: the look-back
/// reads status words that other groups write with atomics, so it must read them with atomics
/// there, although Oclgrind calls its simulator a GPU (the examples' own data hold one tile).
/// Oclgrind's 32 KiB of local memory cannot hold the GPU shape's gathered tile, so that shape
/// also runs with 64 KiB (its kept values gathered in local memory) and with 32 (stored in
/// place).
#[test]
fn look_back_under_oclgrind_reports_no_race() {
    let Some((oclgrind, icd)) = crate::opencl::oclgrind_setup() else {
        return;
    };
    let program = examples_dir().join("filter_glb_only.lisp");
    let program = program.display().to_string();
    for (gpu, local) in [("0", None), ("1", None), ("1", Some("65536"))] {
        let lift_bin = std::path::Path::new(env!("CARGO_BIN_EXE_lift"));
        let args = ["bench", &program, "--size", "N=20001", "--check", "--repeats", "1"];
        let mut cmd = match local {
            // Oclgrind's own options come before the program it runs.
            Some(bytes) => {
                let mut c = Command::new(&oclgrind);
                c.args(["--local-mem-size", bytes]);
                c.args([
                    "--data-races",
                    "--uninitialized",
                    "--check-api",
                    "--build-options",
                    "-cl-opt-disable",
                ]);
                c.arg(lift_bin).args(args);
                c.env("OCL_ICD_VENDORS", &icd).env_remove("LIFT_TEST_DEVICE");
                c
            }
            None => crate::opencl::under_oclgrind(&oclgrind, &icd, lift_bin, &args),
        };
        let out = cmd.env("LIFT_GPU_PATHS", gpu).output().expect("run oclgrind");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let what = format!("LIFT_GPU_PATHS={gpu}, local memory {local:?}");
        assert!(out.status.success(), "{what}: {stderr}");
        if let Some(word) = crate::opencl::OCLGRIND_PROBLEMS.iter().find(|w| stderr.contains(*w)) {
            panic!("{what}: Oclgrind reports `{word}`:\n{stderr}");
        }
        assert!(stdout.contains("check: equals the interpreter"), "{stdout}{stderr}");
    }
}
