//! Several devices for one program (issue 14): every program split over two contexts of one
//! device (`--devices D,D`) equals the reference interpreter, with uneven slices too.

use ir::interp::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// The first OpenCL device's id, named twice: two contexts, two queues, two threads.
fn twice() -> Option<Vec<String>> {
    match host_runner::devices() {
        Ok(devs) if !devs.is_empty() => Some(vec![devs[0].id.clone(), devs[0].id.clone()]),
        Ok(_) => {
            host_runner::skip_without_device("no OpenCL device");
            None
        }
        Err(e) => {
            host_runner::skip_without_device(&e.to_string());
            None
        }
    }
}

/// Floats in [-1, 1) from a fixed seed, so that failures reproduce.
fn floats(n: usize, seed: u64) -> Vec<Value> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Value::Float(((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

fn matrix(rows: usize, cols: usize, seed: u64) -> Value {
    Value::Array(
        (0..rows)
            .map(|r| Value::Array(floats(cols, seed * 1000 + r as u64)))
            .collect(),
    )
}

fn inputs(values: Vec<Value>, sizes: &[(&str, i64)]) -> lift::data::Inputs {
    lift::data::Inputs {
        values,
        sizes: sizes
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// Runs `src` over `devices` with `weights` and compares with the interpreter; returns the plan.
fn check(src: &str, inputs: &lift::data::Inputs, devices: &[String], weights: Option<&[f64]>) {
    let typed = lift::compile(src, &lift::Options::types_only()).expect("types");
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    let want = ir::interp::eval(&typed.given, &inputs.values, &lookup).expect("the interpreter runs it");
    let got = lift::devices::run(src, inputs, devices, weights, false).unwrap_or_else(|e| panic!("{}", e.message()));
    assert!(
        lift::values_close(&want, &got.value, 1e-4),
        "{devices:?} {weights:?}: got {}\nwant {}",
        got.json,
        want.to_json()
    );
}

fn split_of(src: &str) -> lift::devices::Decision {
    let typed = lift::compile(src, &lift::Options::types_only()).expect("types");
    lift::devices::decide(&typed.given, &typed.given_info)
}

const SAXPY: &str = "(lift (N) (float (array-type float N) (array-type float N))
  (lambda (alpha xs ys)
    (toGlobal (mapGlb (lambda (p) (+ (* alpha (get #0 p)) (get #1 p))) (zip xs ys)))))";

#[test]
fn a_map_split_over_two_contexts_equals_the_interpreter() {
    let Some(devs) = twice() else { return };
    let n = 1001;
    let ins = inputs(
        vec![
            Value::Float(2.5),
            Value::Array(floats(n, 1)),
            Value::Array(floats(n, 2)),
        ],
        &[("N", n as i64)],
    );
    match split_of(SAXPY) {
        lift::devices::Decision::Split(s) => {
            assert_eq!(s.sliced, ["xs", "ys"]);
            assert_eq!(s.whole, ["alpha"]);
        }
        lift::devices::Decision::Whole(why) => panic!("saxpy is not split: {why}"),
    }
    check(SAXPY, &ins, &devs, None);
    check(SAXPY, &ins, &devs, Some(&[3.0, 1.0]));
    // A device whose share rounds to nothing gets no slice.
    check(SAXPY, &ins, &devs, Some(&[1.0, 0.0]));
}

const MM: &str = "(lift (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (map (lambda (row)
           (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                      (transpose b))))
         a)))";

#[test]
fn a_matrix_product_slices_rows_and_copies_the_second_operand() {
    let Some(devs) = twice() else { return };
    match split_of(MM) {
        lift::devices::Decision::Split(s) => {
            assert_eq!(
                (s.size.as_str(), s.sliced.as_slice(), s.whole.as_slice()),
                ("M", &["a".to_string()][..], &["b".to_string()][..])
            );
        }
        lift::devices::Decision::Whole(why) => panic!("mm is not split: {why}"),
    }
    let (m, k, n) = (37, 19, 23);
    let ins = inputs(
        vec![matrix(m, k, 3), matrix(k, n, 4)],
        &[("M", m as i64), ("K", k as i64), ("N", n as i64)],
    );
    check(MM, &ins, &devs, None);
    check(MM, &ins, &devs, Some(&[1.0, 2.0]));
}

const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";

#[test]
fn a_reduction_gives_one_partial_per_device_combined_on_the_host() {
    let Some(devs) = twice() else { return };
    let n = 5000;
    let ins = inputs(vec![Value::Array(floats(n, 5))], &[("N", n as i64)]);
    assert!(matches!(
        split_of(SUM),
        lift::devices::Decision::Split(lift::devices::Split {
            gather: lift::devices::Gather::Reduce { .. },
            ..
        })
    ));
    check(SUM, &ins, &devs, None);
    check(SUM, &ins, &devs, Some(&[5.0, 1.0]));
}

#[test]
fn a_reduction_whose_init_is_not_an_identity_runs_whole_and_says_so() {
    let Some(devs) = twice() else { return };
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 1.0f xs)))";
    assert!(matches!(split_of(src), lift::devices::Decision::Whole(why) if why.contains("identity")));
    let n = 300;
    check(
        src,
        &inputs(vec![Value::Array(floats(n, 6))], &[("N", n as i64)]),
        &devs,
        None,
    );
}

const FILTER: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (toGlobal (mapGlb (lambda (x) (+ x 100.0f)) (toGlobal (filterGlb (lambda (x) (< x 0.0f)) xs))))))";

#[test]
fn a_filter_gives_one_part_per_device_concatenated_in_order() {
    let Some(devs) = twice() else { return };
    assert!(matches!(split_of(FILTER), lift::devices::Decision::Split(_)));
    let n = 777;
    let ins = inputs(vec![Value::Array(floats(n, 7))], &[("N", n as i64)]);
    check(FILTER, &ins, &devs, None);
    check(FILTER, &ins, &devs, Some(&[1.0, 4.0]));
}

#[test]
fn a_map_whose_input_is_also_read_whole_gets_a_sliced_copy() {
    let Some(devs) = twice() else { return };
    // Each element against every element (n-body's shape): `xs` is sliced as the map's input
    // and copied whole for the inner reduction.
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (join (map (lambda (x) (reduce + 0.0f (map (lambda (y) (* x y)) xs))) xs))))";
    match split_of(src) {
        lift::devices::Decision::Split(s) => {
            assert_eq!(
                s.params,
                [
                    lift::devices::Take::Whole(0),
                    lift::devices::Take::Cut {
                        param: 0,
                        dim: 0,
                        window: (1, 1),
                        pre: None
                    }
                ]
            );
        }
        lift::devices::Decision::Whole(why) => panic!("not split: {why}"),
    }
    let n = 130;
    check(
        src,
        &inputs(vec![Value::Array(floats(n, 8))], &[("N", n as i64)]),
        &devs,
        Some(&[2.0, 1.0]),
    );
}

fn examples_dir() -> std::path::PathBuf {
    crate::examples_dir()
}

#[test]
fn a_failing_device_gives_one_error_naming_it_and_no_result() {
    let Some(devs) = twice() else { return };
    let ex = examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("saxpy.lisp"))
        .arg("--data")
        .arg(ex.join("saxpy.json"))
        .arg("--devices")
        .arg(format!("{},9:9", devs[0]))
        .output()
        .expect("lift runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(crate::mentions(&stderr, "device 1 (9:9) failed"), "{stderr}");
    assert_eq!(stderr.matches("error").count(), 1, "{stderr}");
}

#[test]
fn the_plan_shows_the_split() {
    let ex = examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("compile")
        .arg(ex.join("hl_mm.lisp"))
        .args(["--emit", "plan", "--devices", "0:0,0:0"])
        .output()
        .expect("lift runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("split: M into 2 contiguous slices of length Mpart"),
        "{stdout}"
    );
    assert!(
        stdout.contains("sliced by M: a\ncopied whole to every device: b\n"),
        "{stdout}"
    );
    assert!(stdout.contains("v_a : (v_K*v_Mpart) x float (input 0)"), "{stdout}");
}

#[test]
fn devices_named_differently_are_calibrated_and_still_agree() {
    let Some(devs) = twice() else { return };
    // The same device by id and by name: two specs, so the split is measured (a short profiled
    // run on each) rather than assumed equal.
    let name = host_runner::devices().expect("listed above")[0].name.clone();
    let both = vec![devs[0].clone(), name];
    let (m, k, n) = (70, 16, 9);
    let ins = inputs(
        vec![matrix(m, k, 9), matrix(k, n, 10)],
        &[("M", m as i64), ("K", k as i64), ("N", n as i64)],
    );
    check(MM, &ins, &both, None);
}

/// n-body's shape as a host loop: each step's map reads its element and every element of the
/// state, so every device needs the whole state of the step before.
const SMOOTH: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (iterate K
      (lambda (s)
        (join (mapGlb (lambda (x)
                        (mapSeq (lambda (t) (+ (* x 0.5f) (* t 0.01f)))
                                (reduceSeq (lambda (acc y) (+ acc y)) 0.0f s)))
                      s)))
      xs)))";

#[test]
fn a_host_loop_over_two_contexts_exchanges_the_state_each_step() {
    let Some(devs) = twice() else { return };
    let typed = lift::compile(SMOOTH, &lift::Options::types_only()).expect("types");
    let hl = lift::devices::host_loop(&typed.given, &typed.given_info).expect("the loop's step splits");
    assert_eq!(hl.step.sliced, ["s"]);
    let n = 101;
    let ins = inputs(vec![Value::Array(floats(n, 11))], &[("N", n as i64), ("K", 4)]);
    check(SMOOTH, &ins, &devs, None);
    check(SMOOTH, &ins, &devs, Some(&[1.0, 3.0]));
}

#[test]
fn a_device_whose_build_fails_mid_run_gives_one_error_naming_it_and_no_result() {
    let Some(devs) = twice() else { return };
    let ex = examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("hl_mm.lisp"))
        .arg("--data")
        .arg(ex.join("hl_mm.json"))
        .arg("--devices")
        .arg(devs.join(","))
        .env(lift::devices::FAIL_VAR, "1")
        .output()
        .expect("lift runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        crate::mentions(&stderr, &format!("device 1 ({}) failed", devs[1])),
        "{stderr}"
    );
    assert!(crate::mentions(&stderr, "could not build"), "{stderr}");
    assert!(
        stderr.contains("forced by LIFT_DEVICES_FAIL"),
        "the build log is kept: {stderr}"
    );
}

/// `lift tune --devices D,D`: every device measures, gets its own section of the report, and its
/// measurements land in the tuning cache. (That the two sweep at once is a matter of timing:
/// whether their measurement windows overlap depends on the machine's load, so no test says.)
#[test]
fn tune_measures_on_every_device() {
    let Some(devs) = twice() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-devices-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let table = dir.join("t.json");
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("tune")
        .arg(examples_dir().join("hl_sum.lisp"))
        .args(["--size", "N=65536", "--top", "2", "--repeats", "1", "--devices"])
        .arg(devs.join(","))
        .arg("--out")
        .arg(&table)
        .env("LIFT_CACHE_DIR", &dir)
        .output()
        .expect("lift runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\x1b'),
        "progress drawn on a non-terminal stderr:\n{stderr:?}"
    );
    assert_eq!(stdout.matches(&format!("({})\n", devs[0])).count(), 2, "{stdout}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&table).expect("the table")).expect("JSON");
    for k in [0u64, 1] {
        let measured = rows
            .as_array()
            .expect("rows")
            .iter()
            .filter(|r| r["device_index"] == k && r["ended_s"].as_f64() > r["started_s"].as_f64())
            .count();
        assert!(measured > 0, "device {k} measured nothing: {rows}");
    }
    let cache = std::fs::read_to_string(dir.join("tuning.json")).expect("the tuning cache");
    let name = &host_runner::devices().expect("listed above")[0].name;
    assert!(
        cache.contains(&format!("|{name}\"")),
        "no measurement of {name} in the cache:\n{cache}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The interpreter has no devices: `--devices` with `--backend interp` is a usage error (exit
/// 2), not silently ignored.
#[test]
fn devices_with_the_interpreter_is_a_usage_error() {
    let ex = examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("saxpy.lisp"))
        .arg("--data")
        .arg(ex.join("saxpy.json"))
        .args(["--backend", "interp", "--devices", "0:0,0:0"])
        .output()
        .expect("lift runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("--devices") && stderr.contains("--backend interp"),
        "{stderr}"
    );
}

fn layout_split_of(src: &str) -> lift::devices::Split {
    match split_of(src) {
        lift::devices::Decision::Split(s) => s,
        lift::devices::Decision::Whole(why) => panic!("not split: {why}"),
    }
}

const STENCIL: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (join (mapGlb (lambda (w) (toGlobal (reduceSeq (lambda (a x) (+ (* a 0.5f) x)) 0.0f w)))
                  (slide #3 #1 (pad-clamp #1 #1 xs))))))";

/// A stencil splits over its windows: each slice takes its rows of the padded input and the
/// halo it shares with the next slice (the padding made on the host, so only the end slices
/// hold it); with uneven slices and with one device given nothing too.
#[test]
fn a_stencil_splits_with_halos() {
    let Some(devs) = twice() else { return };
    let s = layout_split_of(STENCIL);
    assert!(
        matches!(
            &s.params[..],
            [lift::devices::Take::Cut {
                param: 0,
                dim: 0,
                window: (3, 1),
                pre: Some(_)
            }]
        ),
        "{:?}",
        s.params
    );
    for n in [1001usize, 7, 2] {
        let ins = inputs(vec![Value::Array(floats(n, 21))], &[("N", n as i64)]);
        check(STENCIL, &ins, &devs, None);
        check(STENCIL, &ins, &devs, Some(&[3.0, 1.0]));
        check(STENCIL, &ins, &devs, Some(&[0.0, 1.0]));
    }
    // Windows of 5 every 2 of the input itself, and a constant pad read element by element.
    let strided = "(lift (N) ((array-type float N))
      (lambda (xs) (join (mapGlb (lambda (w) (toGlobal (reduceSeq + 0.0f w))) (slide #5 #2 xs)))))";
    assert!(matches!(
        &layout_split_of(strided).params[..],
        [lift::devices::Take::Cut {
            param: 0,
            dim: 0,
            window: (5, 2),
            pre: None
        }]
    ));
    let padded = "(lift (N) (float (array-type float N))
      (lambda (a xs) (toGlobal (mapGlb (lambda (x) (* a x)) (pad #1 #2 -1.0f xs)))))";
    let n = 1000;
    check(
        strided,
        &inputs(vec![Value::Array(floats(n, 22))], &[("N", n as i64)]),
        &devs,
        Some(&[1.0, 2.0]),
    );
    check(
        padded,
        &inputs(vec![Value::Float(3.0), Value::Array(floats(n, 23))], &[("N", n as i64)]),
        &devs,
        Some(&[2.0, 1.0]),
    );
}

/// A map over chunks (`split`) gives each device whole chunks, with uneven slices too.
#[test]
fn a_map_over_chunks_splits_by_whole_chunks() {
    let Some(devs) = twice() else { return };
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (join (mapGlb (lambda (c) (toGlobal (reduceSeq + 0.0f c))) (split #4 xs)))))";
    let s = layout_split_of(src);
    assert!(
        matches!(&s.params[..], [lift::devices::Take::Cut { window: (4, 4), .. }]),
        "{:?}",
        s.params
    );
    let n = 4 * 251;
    let ins = inputs(vec![Value::Array(floats(n, 26))], &[("N", n as i64)]);
    check(src, &ins, &devs, None);
    check(src, &ins, &devs, Some(&[1.0, 5.0]));
}

/// A map over the columns of a matrix (`transpose`) cuts every row.
#[test]
fn a_map_over_a_transpose_splits_the_columns() {
    let Some(devs) = twice() else { return };
    let src = "(lift (M N) ((array-type (array-type float N) M))
      (lambda (m) (mapGlb (lambda (col) (toGlobal (reduceSeq + 0.0f col))) (transpose m))))";
    let s = layout_split_of(src);
    assert_eq!(
        (s.size.as_str(), &s.params[..]),
        (
            "N",
            &[lift::devices::Take::Cut {
                param: 0,
                dim: 1,
                window: (1, 1),
                pre: None
            }][..]
        )
    );
    let (m, n) = (13, 101);
    let ins = inputs(vec![matrix(m, n, 24)], &[("M", m as i64), ("N", n as i64)]);
    check(src, &ins, &devs, None);
    check(src, &ins, &devs, Some(&[1.0, 4.0]));
}

/// A Jacobi-like host loop over a stencil: every step's slices take their halos from the
/// gathered state of the step before.
#[test]
fn a_stencil_host_loop_splits_every_step() {
    let Some(devs) = twice() else { return };
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K
          (lambda (s)
            (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.25f)) (reduceSeq + 0.0f w))))
                          (slide #3 #1 (pad-clamp #1 #1 s)))))
          xs)))";
    let typed = lift::compile(src, &lift::Options::types_only()).expect("types");
    let hl = lift::devices::host_loop(&typed.given, &typed.given_info).expect("the loop's step splits");
    assert!(
        matches!(
            &hl.step.params[..],
            [.., lift::devices::Take::Cut { window: (3, 1), .. }]
        ),
        "{:?}",
        hl.step.params
    );
    let n = 301;
    let ins = inputs(vec![Value::Array(floats(n, 25))], &[("N", n as i64), ("K", 5)]);
    check(src, &ins, &devs, None);
    check(src, &ins, &devs, Some(&[1.0, 3.0]));
}

/// With sizes, `--emit plan --devices` shows each device's share and why; the estimate of a
/// device is probed once at a small size and then comes from the cache.
#[test]
fn the_plan_shows_each_devices_share_and_why() {
    let Some(devs) = twice() else { return };
    // The same device by id and by name: two specs, so the shares are estimated.
    let name = host_runner::devices().expect("listed above")[0].name.clone();
    let dir = std::env::temp_dir().join(format!("lift-it-devices-shares-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let plan = || {
        let out = Command::new(env!("CARGO_BIN_EXE_lift"))
            .arg("compile")
            .arg(examples_dir().join("hl_mm.lisp"))
            .args(["--emit", "plan", "--devices"])
            .arg(format!("{},{name}", devs[0]))
            .args(["--size", "M=256", "--size", "K=64", "--size", "N=64"])
            .env("LIFT_CACHE_DIR", &dir)
            .output()
            .expect("lift runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = plan();
    assert!(first.contains(&format!("slice 0: device {}, 0..", devs[0])), "{first}");
    assert!(first.contains("% of the range: ends at"), "{first}");
    assert!(first.contains("just now, cached"), "{first}");
    // (Whether the second device gets rows, or is not even probed because 256 rows take the
    // first less than the second needs to build its kernels, depends on measured times.)
    assert!(first.contains(&format!("slice 1: device {name}, ")), "{first}");
    let again = plan();
    assert!(!again.contains("just now"), "probed again: {again}");
    assert!(again.contains("calibrated before"), "{again}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A device given the whole range runs the program as given, on the inputs as read (no slice
/// program, no copies of the inputs), and the result is still the interpreter's.
#[test]
fn a_device_given_everything_runs_the_program_as_given() {
    let Some(devs) = twice() else { return };
    let n = 257;
    let ins = inputs(
        vec![
            Value::Float(-1.5),
            Value::Array(floats(n, 31)),
            Value::Array(floats(n, 32)),
        ],
        &[("N", n as i64)],
    );
    let got =
        lift::devices::run(SAXPY, &ins, &devs, Some(&[0.0, 1.0]), true).unwrap_or_else(|e| panic!("{}", e.message()));
    let timing = got.timing.expect("timed");
    assert!(
        timing.contains(&format!("device 1 ({}), the whole range", devs[1])),
        "{timing}"
    );
    check(SAXPY, &ins, &devs, Some(&[0.0, 1.0]));
}

/// `lift bench PROG --devices D,D --json` (issue 17): runs the CLI and returns its one object.
fn bench_devices(program: &std::path::Path, devs: &[String], sizes: &[&str], check: &[&str]) -> serde_json::Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lift"));
    cmd.arg("bench")
        .arg(program)
        .args(["--devices", &devs.join(","), "--repeats", "3", "--json"]);
    for s in sizes {
        cmd.args(["--size", s]);
    }
    for s in check {
        cmd.args(["--check-size", s]);
    }
    let out = cmd.output().expect("lift runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    crate::parse_json(&String::from_utf8_lossy(&out.stdout), "lift bench --devices --json")
}

/// Every field of a `bench --devices` report: per device its share (the shares cover the split
/// range in order), upload, kernel, download, decode and exchange times; per run the gather
/// and wall times; both the split and the first device alone, each checked equal to the
/// interpreter; and the speed-ups.
fn assert_report(r: &serde_json::Value, devices: usize, steps: u64) {
    let n = r["split_length"].as_u64().expect("split_length");
    assert_eq!(r["steps"].as_u64(), Some(steps), "{r}");
    for (what, m, count) in [("split", &r["split"], devices), ("single", &r["single"], 1)] {
        let ds = m["devices"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: devices in {r}"));
        assert_eq!(ds.len(), count, "{what}: {r}");
        let mut next = 0;
        for d in ds {
            let share = d["share"].as_array().expect("share");
            assert_eq!(share[0].as_u64(), Some(next), "{what}: shares in order: {r}");
            next = share[1].as_u64().expect("share end");
            for f in ["upload_ms", "kernel_ms", "download_ms", "decode_ms", "exchange_ms"] {
                let t = d[f].as_f64().unwrap_or_else(|| panic!("{what}: {f} in {d}"));
                assert!(t >= 0.0, "{what}: {f} in {d}");
            }
            assert!(d["kernel_ms"].as_f64() > Some(0.0), "{what}: no kernel time in {d}");
            assert!(d["upload_ms"].as_f64() > Some(0.0), "{what}: no upload time in {d}");
            // A host loop sends the new state every step after the first; a program without
            // one sends nothing.
            assert_eq!(
                d["exchange_ms"].as_f64() > Some(0.0),
                steps > 1,
                "{what}: exchange in {d}"
            );
            assert!(d["name"].is_string() && d["device"].is_string(), "{d}");
        }
        assert_eq!(next, n, "{what}: the shares cover 0..{n}: {r}");
        assert_eq!(m["walls_ms"].as_array().map(Vec::len), Some(3), "{what}: {r}");
        assert!(m["wall_ms"].as_f64() > Some(0.0), "{what}: {r}");
        assert!(m["total_ms"].as_f64() >= m["wall_ms"].as_f64(), "{what}: {r}");
        assert!(m["gather_ms"].as_f64() >= Some(0.0), "{what}: {r}");
        assert_eq!(m["setup_ms"].as_array().map(Vec::len), Some(count), "{what}: {r}");
    }
    assert!(
        r["speedup_wall"].as_f64() > Some(0.0) && r["speedup_kernels"].as_f64() > Some(0.0),
        "{r}"
    );
    let check = r["check"].as_str().expect("check");
    assert!(
        check.starts_with("split: equals the interpreter")
            && check.contains("; first device alone: equals the interpreter"),
        "{check}"
    );
}

#[test]
fn bench_devices_times_each_phase_of_a_map() {
    let Some(devs) = twice() else { return };
    let r = bench_devices(&examples_dir().join("saxpy.lisp"), &devs, &["N=4096"], &["N=100"]);
    assert_report(&r, 2, 1);
    assert_eq!(r["split"]["devices"][0]["share"], serde_json::json!([0, 2048]), "{r}");
    // The text report: each device's phases, both runs, the speed-ups and the check.
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("bench")
        .arg(examples_dir().join("saxpy.lisp"))
        .args([
            "--devices",
            &devs.join(","),
            "--size",
            "N=4096",
            "--repeats",
            "1",
            "--check",
        ])
        .output()
        .expect("lift runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for needle in [
        "share 0..2048: upload ",
        "share 2048..4096: upload ",
        "first device alone:\n  device 0 ",
        "share 0..4096: upload ",
        ", kernels ",
        ", download ",
        ", exchange ",
        "speed-up over the first device alone: wall ",
        "check: split: equals the interpreter at N=4096",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
}

#[test]
fn bench_devices_times_each_phase_of_mm() {
    let Some(devs) = twice() else { return };
    let r = bench_devices(
        &examples_dir().join("hl_mm.lisp"),
        &devs,
        &["M=64", "K=32", "N=16"],
        &["M=8", "K=4", "N=4"],
    );
    assert_report(&r, 2, 1);
    assert_eq!(r["sliced"], serde_json::json!(["a"]), "{r}");
}

/// A host loop: the state goes to every device each step, so each has exchange time, and the
/// whole run (every step) equals the interpreter.
#[test]
fn bench_devices_times_each_phase_of_a_host_loop() {
    let Some(devs) = twice() else { return };
    let src = std::fs::read_to_string(examples_dir().join("host_nbody.lisp")).expect("the example");
    assert!(src.contains("(iterate #1000"), "the example's loop changed");
    let dir = std::env::temp_dir().join(format!("lift-it-bench-devices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let file = dir.join("host_nbody_5.lisp");
    std::fs::write(&file, src.replace("(iterate #1000", "(iterate #5")).expect("written");
    let r = bench_devices(&file, &devs, &["N=96"], &["N=12"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_report(&r, 2, 5);
}

/// The measured run's value itself, at the timed sizes, is the interpreter's (split unevenly:
/// 3 rows over two devices of one).
#[test]
fn a_measured_split_equals_the_interpreter() {
    let Some(devs) = twice() else { return };
    let ins = inputs(
        vec![matrix(3, 5, 41), matrix(5, 2, 42)],
        &[("M", 3), ("K", 5), ("N", 2)],
    );
    let typed = lift::compile(MM, &lift::Options::types_only()).expect("types");
    let lookup = |n: &str| ins.sizes.get(n).copied();
    let want = ir::interp::eval(&typed.given, &ins.values, &lookup).expect("the interpreter runs it");
    let m = lift::devices::measure(MM, &ins, &devs, 2).unwrap_or_else(|e| panic!("{}", e.message()));
    assert!(lift::values_close(&want, &m.value, 1e-4), "{:?}", m.value);
    let ranges: Vec<_> = m.median.devices.iter().map(|d| d.range.clone()).collect();
    assert_eq!(ranges, vec![0..2, 2..3]);
}

/// A program that is not split is one clear error (nothing to compare), not a panic.
#[test]
fn bench_devices_of_a_program_that_does_not_split_says_why() {
    let Some(devs) = twice() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("bench")
        .arg(examples_dir().join("reverse.lisp"))
        .args(["--devices", &devs.join(","), "--size", "N=64"])
        .output()
        .expect("lift runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is not split over devices") && !err.contains("panicked"),
        "{err}"
    );
}

/// [`check`], and the split also equals the program run on the first device alone.
fn check_with_one(src: &str, inputs: &lift::data::Inputs, devices: &[String], weights: Option<&[f64]>) {
    check(src, inputs, devices, weights);
    let one = lift::devices::run(src, inputs, &devices[..1], None, false).unwrap_or_else(|e| panic!("{}", e.message()));
    let got = lift::devices::run(src, inputs, devices, weights, false).unwrap_or_else(|e| panic!("{}", e.message()));
    assert!(
        lift::values_close(&one.value, &got.value, 1e-4),
        "{devices:?} {weights:?}: split {}\none device {}",
        got.json,
        one.json
    );
}

/// `lift compile --emit plan --devices D,D` of a program text.
fn plan_of(src: &str, devs: &[String]) -> String {
    lift::devices::describe(src, devs, &[]).unwrap_or_else(|e| panic!("{}", e.message()))
}

/// A stencil's windows zipped with an input read row by row (and, through `at`, whole): each
/// operand of the `zip` is cut its own way (the windows with their halo, the other by rows),
/// and the input also read whole is copied whole beside its slice.
const ZIP_STENCIL: &str = "(lift (N) ((array-type float N) (array-type float N))
  (lambda (xs ws)
    (join (mapGlb (lambda (p) (toGlobal (mapSeq (lambda (s) (+ (* s (get #1 p)) (at 0 ws)))
                                                (reduceSeq + 0.0f (get #0 p)))))
                  (zip (slide #3 #1 (pad-clamp #1 #1 xs)) ws)))))";

#[test]
fn a_layout_zipped_with_an_input_read_by_rows_splits() {
    let Some(devs) = twice() else { return };
    let s = layout_split_of(ZIP_STENCIL);
    assert_eq!(
        (s.sliced.as_slice(), s.whole.as_slice()),
        (&["xs".to_string(), "ws".to_string()][..], &[][..])
    );
    assert!(
        matches!(
            &s.params[..],
            [
                lift::devices::Take::Whole(1),
                lift::devices::Take::Cut {
                    param: 0,
                    dim: 0,
                    window: (3, 1),
                    pre: Some(_)
                },
                lift::devices::Take::Cut {
                    param: 1,
                    dim: 0,
                    window: (1, 1),
                    pre: None
                },
            ]
        ),
        "{:?}",
        s.params
    );
    let plan = plan_of(ZIP_STENCIL, &devs);
    assert!(plan.contains("sliced by N: xs, ws\n"), "{plan}");
    assert!(plan.contains("xs: windows of 3 every 1"), "{plan}");
    assert!(plan.contains("v_xspart : (v_Npart+2) x float"), "{plan}");
    for n in [1000usize, 3] {
        let ins = inputs(
            vec![Value::Array(floats(n, 51)), Value::Array(floats(n, 52))],
            &[("N", n as i64)],
        );
        check_with_one(ZIP_STENCIL, &ins, &devs, None);
        check_with_one(ZIP_STENCIL, &ins, &devs, Some(&[1.0, 3.0]));
    }
    // Two stencils of one input zipped: two cuts of it (each its own halo and padding), and
    // the input itself is needed nowhere else.
    let two = "(lift (N) ((array-type float N))
      (lambda (xs)
        (join (mapGlb (lambda (p) (toGlobal (join (mapSeq (lambda (a) (mapSeq (lambda (b) (+ a b))
                                                                              (reduceSeq + 0.0f (get #1 p))))
                                                          (reduceSeq + 0.0f (get #0 p))))))
                      (zip (slide #3 #1 (pad #1 #1 0.0f xs)) (slide #5 #1 (pad #2 #2 0.0f xs)))))))";
    let s = layout_split_of(two);
    assert!(
        matches!(
            &s.params[..],
            [
                lift::devices::Take::Cut {
                    param: 0,
                    window: (3, 1),
                    ..
                },
                lift::devices::Take::Cut {
                    param: 0,
                    window: (5, 1),
                    ..
                },
            ]
        ),
        "{:?}",
        s.params
    );
    assert!(plan_of(two, &devs).contains("v_xspart2 : (v_Npart+4) x float"));
    let n = 401;
    let ins = inputs(vec![Value::Array(floats(n, 58))], &[("N", n as i64)]);
    check_with_one(two, &ins, &devs, Some(&[2.0, 1.0]));
}

/// Layouts of layouts: chunks of a stencil's windows (their windows compose: chunks of 2
/// windows of 3 are windows of 4 every 2 of the padded input), and a stencil over the columns of
/// a matrix (each row's columns cut, with their halo).
#[test]
fn nested_layouts_split() {
    let Some(devs) = twice() else { return };
    let chunked = "(lift (N) ((array-type float N))
      (lambda (xs)
        (join (mapGlb (lambda (c) (toGlobal (mapSeq (lambda (w) (reduceSeq + 0.0f w)) c)))
                      (split #2 (slide #3 #1 (pad-clamp #1 #1 xs)))))))";
    assert!(
        matches!(
            &layout_split_of(chunked).params[..],
            [lift::devices::Take::Cut {
                param: 0,
                dim: 0,
                window: (4, 2),
                pre: Some(_)
            }]
        ),
        "{:?}",
        layout_split_of(chunked).params
    );
    let plan = plan_of(chunked, &devs);
    assert!(plan.contains("xs: windows of 4 every 2"), "{plan}");
    for n in [1000usize, 2] {
        let ins = inputs(vec![Value::Array(floats(n, 53))], &[("N", n as i64)]);
        check_with_one(chunked, &ins, &devs, None);
        check_with_one(chunked, &ins, &devs, Some(&[3.0, 1.0]));
    }
    let columns = "(lift (M N) ((array-type (array-type float N) M))
      (lambda (m)
        (join (mapGlb (lambda (w) (toGlobal (reduceSeq + 0.0f (join w))))
                      (slide #3 #1 (transpose m))))))";
    let s = layout_split_of(columns);
    assert_eq!((s.size.as_str(), s.part.as_str()), ("(N-2)", "Npart"));
    assert_eq!(
        s.params,
        [lift::devices::Take::Cut {
            param: 0,
            dim: 1,
            window: (3, 1),
            pre: None
        }]
    );
    let plan = plan_of(columns, &devs);
    assert!(
        plan.contains("m: the map goes over its columns") && plan.contains("m: windows of 3 every 1"),
        "{plan}"
    );
    let (m, n) = (7, 45);
    let ins = inputs(vec![matrix(m, n, 54)], &[("M", m as i64), ("N", n as i64)]);
    check_with_one(columns, &ins, &devs, None);
    check_with_one(columns, &ins, &devs, Some(&[1.0, 5.0]));
}

/// A whole-array sum as the rewrite lowers it (`grid-reduce`: per-group partial results over a
/// padded, transposed layout of the input, then one final group): each device computes its
/// groups' partials from its columns of the layout, made on the host, and the final group
/// combines them on the host.
#[test]
fn a_lowered_reduction_splits_its_partials_and_combines_them_at_the_end() {
    let Some(devs) = twice() else { return };
    let src = std::fs::read_to_string(examples_dir().join("onekernel_sum.lisp")).expect("the example");
    let s = layout_split_of(&src);
    assert!(
        matches!(&s.gather, lift::devices::Gather::Finish { name, .. } if name == "parts"),
        "{:?}",
        s.gather
    );
    assert!(
        matches!(
            &s.params[..],
            [lift::devices::Take::Cut {
                param: 0,
                dim: 1,
                window: (8, 8),
                pre: Some(_)
            }]
        ),
        "{:?}",
        s.params
    );
    let plan = plan_of(&src, &devs);
    assert!(plan.contains("split: 4 into 2 contiguous slices"), "{plan}");
    assert!(
        plan.contains("gathered: the parts of `parts` (each device's partial results) concatenated in slice order; the rest of the program (the final combination) runs on the host on them"),
        "{plan}"
    );
    for n in [1000usize, 37, 1] {
        let ins = inputs(vec![Value::Array(floats(n, 55))], &[("N", n as i64)]);
        check_with_one(&src, &ins, &devs, None);
        check_with_one(&src, &ins, &devs, Some(&[3.0, 1.0]));
    }
    // What follows a split `let` is run on the host only when it is a combination (a result
    // of constant size): a whole array after it runs whole on a device.
    let after = "(lift (N) ((array-type float N))
      (lambda (xs)
        (let a (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))
          (toGlobal (mapGlb (lambda (x) (+ x 1.0f)) (reverse a))))))";
    assert!(matches!(split_of(after), lift::devices::Decision::Whole(_)));
}

/// A host loop whose step is a reduction of an input (the state, one value, read whole by
/// every element): every step's partials are combined on the host into the next state, which
/// goes to every device.
#[test]
fn a_host_loop_whose_step_is_a_reduction_splits_every_step() {
    let Some(devs) = twice() else { return };
    let src = "(lift (N K) ((array-type float N) (array-type float 1))
      (lambda (xs s0)
        (iterate K
          (lambda (s) (reduce + 0.0f (map (lambda (x) (* 0.001f (+ x (at 0 s)))) xs)))
          s0)))";
    let typed = lift::compile(src, &lift::Options::types_only()).expect("types");
    let hl = lift::devices::host_loop(&typed.given, &typed.given_info).expect("the loop's step splits");
    assert!(
        matches!(hl.step.gather, lift::devices::Gather::Reduce { .. }),
        "{:?}",
        hl.step.gather
    );
    assert_eq!(hl.step.sliced, ["xs"]);
    let plan = plan_of(src, &devs);
    assert!(
        plan.contains("host loop: K steps, each split over the devices")
            && plan.contains("gathered: one partial per device, reduced on the host"),
        "{plan}"
    );
    let n = 999;
    let ins = inputs(
        vec![Value::Array(floats(n, 56)), Value::Array(vec![Value::Float(0.5)])],
        &[("N", n as i64), ("K", 4)],
    );
    check_with_one(src, &ins, &devs, None);
    check_with_one(src, &ins, &devs, Some(&[1.0, 2.0]));
}

/// A host loop whose step does not split runs whole, and the plan says why.
#[test]
fn the_plan_says_why_a_host_loop_runs_whole() {
    let Some(devs) = twice() else { return };
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs) (iterate K (lambda (s) (toGlobal (mapGlb (lambda (x) (* x 0.5f)) (reverse s)))) xs)))";
    let plan = plan_of(src, &devs);
    assert!(
        plan.contains("not split: a host loop whose step is not split (its step does not split: "),
        "{plan}"
    );
    let n = 50;
    check(
        src,
        &inputs(vec![Value::Array(floats(n, 57))], &[("N", n as i64), ("K", 3)]),
        &devs,
        None,
    );
}

/// `lift run --devices` compiles for each device within its work-group limits, as `lift run
/// --device` does: a 72×72 `mapLcl` tile runs at a limit of 64 work-items (it was refused at
/// launch).
#[test]
fn a_run_over_devices_compiles_within_the_device_limits() {
    let Some(devs) = twice() else { return };
    let ex = examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("maplcl_72x72.lisp"))
        .arg("--data")
        .arg(ex.join("maplcl_72x72.json"))
        .args(["--devices", &devs.join(",")])
        .env(host_runner::MAX_WORK_GROUP_VAR, "64")
        .output()
        .expect("lift runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let interp = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("maplcl_72x72.lisp"))
        .arg("--data")
        .arg(ex.join("maplcl_72x72.json"))
        .args(["--backend", "interp"])
        .output()
        .expect("lift runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&interp.stdout)
    );
}

/// `lift bench --devices` of a lowered reduction: each device's partials, the final group on
/// the host, and both runs equal the interpreter.
#[test]
fn bench_devices_times_a_lowered_reduction() {
    let Some(devs) = twice() else { return };
    let r = bench_devices(
        &examples_dir().join("onekernel_sum.lisp"),
        &devs,
        &["N=4096"],
        &["N=100"],
    );
    assert_report(&r, 2, 1);
    assert_eq!(r["split"]["devices"][1]["share"], serde_json::json!([2, 4]), "{r}");
}

/// `--emit plan --mpi R` shows the split over MPI ranks without running (no MPI needed): what is
/// scattered, broadcast, gathered, and a loop's exchange per step.
#[test]
fn the_plan_over_mpi_ranks_shows_the_split_and_the_exchanges() {
    let ex = examples_dir();
    let plan = |file: &str, sizes: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lift"));
        cmd.arg("compile")
            .arg(ex.join(file))
            .args(["--emit", "plan", "--mpi", "3"]);
        for s in sizes {
            cmd.args(["--size", s]);
        }
        let out = cmd.output().expect("lift runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let saxpy = plan("saxpy.lisp", &["N=9"]);
    assert!(saxpy.contains("split: N into 3 contiguous slices"), "{saxpy}");
    assert!(
        saxpy.contains("rank 2: 6..9 (receives 24 B of sliced inputs)"),
        "{saxpy}"
    );
    assert!(
        saxpy.contains("gathered on rank 0: the parts concatenated in rank order"),
        "{saxpy}"
    );
    let nbody = plan("host_nbody.lisp", &["N=6"]);
    assert!(nbody.contains("host loop: 1000 steps"), "{nbody}");
    assert!(nbody.contains("between steps: all-gather (MPI_Allgatherv)"), "{nbody}");
    // 6 bodies of 4 floats over 3 ranks: each receives the other 4 bodies each step.
    assert!(nbody.contains("rank 1: receives 64 B per step"), "{nbody}");
    let jacobi = plan("host_jacobi.lisp", &["N=8"]);
    assert!(jacobi.contains("halo exchange"), "{jacobi}");
    assert!(
        jacobi.contains("each rank tests its own rows of the previous and the new state"),
        "{jacobi}"
    );
    assert!(jacobi.contains("(MPI_Allreduce, MPI_MIN) decides the exit"), "{jacobi}");
    // Without MPI-specific flags it is a usage error to ask for it without `--emit plan`.
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("compile")
        .arg(ex.join("saxpy.lisp"))
        .args(["--mpi", "3"])
        .output()
        .expect("lift runs");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
