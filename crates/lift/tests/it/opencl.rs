//! Every example on a real OpenCL device equals the reference interpreter (PoCL in CI;
//! `LIFT_TEST_DEVICE` picks another device, by `P:D` id or name). The tests skip, with a
//! message, only when the machine has no OpenCL device at all.
//!
//! With `LIFT_OCLGRIND=1` and `oclgrind` on the PATH, `oclgrind` also runs every example
//! through the `lift` binary and must report nothing: no invalid (out-of-bounds) access, no
//! data race, no uninitialized value, no divergent barrier, no API error.

use crate::{check_all, error_examples, examples, interp_options, json_close, mentions, parse_json, Example};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The device to test on, or `None` (after saying why) when there is no OpenCL device.
pub(crate) fn device() -> Option<Option<String>> {
    match host_runner::devices() {
        Err(e) => {
            host_runner::skip_without_device(&e.to_string());
            None
        }
        Ok(devs) if devs.is_empty() => {
            host_runner::skip_without_device("no OpenCL device");
            None
        }
        Ok(_) => Some(std::env::var("LIFT_TEST_DEVICE").ok().filter(|d| !d.is_empty())),
    }
}

fn cl_options(device: &Option<String>) -> lift::RunOptions {
    lift::RunOptions {
        device: device.clone(),
        time: false,
        interp: false,
    }
}

fn runs_on_opencl() -> Vec<Example> {
    examples().into_iter().filter(|ex| ex.header.opencl).collect()
}

#[test]
fn examples_equal_the_interpreter() {
    let Some(device) = device() else { return };
    check_all(
        &runs_on_opencl(),
        |ex| &ex.name,
        |ex| {
            let data = vec![ex.data_path().ok_or("no `;; data:` line")?];
            let reference = lift::run_files(&ex.src, &data, &ex.header.sizes, &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
            let res = lift::run_files(&ex.src, &data, &ex.header.sizes, &cl_options(&device))
                .map_err(|e| format!("OpenCL: {}", e.render(&ex.name, &ex.src)))?;
            let (want, got) = (
                parse_json(&reference.json, "the interpreter's result"),
                parse_json(&res.json, "the OpenCL result"),
            );
            if !json_close(&want, &got) {
                return Err(format!("interpreter {want}\n     OpenCL {got}"));
            }
            Ok(())
        },
    );
}

/// A small deterministic generator for the larger inputs below.
struct Lcg(u64);

impl Lcg {
    fn int(&mut self, below: u64) -> i64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below) as i64
    }
    /// Floats on a grid of `1/den` in `[lo, lo + steps/den)`: small sums of them are exact in
    /// float32, so a different summation order on the device cannot change the result.
    fn floats(&mut self, n: usize, lo: f64, steps: u64, den: f64) -> serde_json::Value {
        (0..n)
            .map(|_| serde_json::json!(lo + self.int(steps) as f64 / den))
            .collect()
    }
    fn matrix(&mut self, rows: usize, cols: usize) -> serde_json::Value {
        (0..rows).map(|_| self.floats(cols, -4.0, 33, 4.0)).collect()
    }
    /// 64 random bits.
    fn bits(&mut self) -> u64 {
        let (hi, lo, low2) = (self.int(1 << 31) as u64, self.int(1 << 31) as u64, self.int(4) as u64);
        hi << 33 | lo << 2 | low2
    }
    /// `n` values of 32 (or 64) random bits as uints, ints (of all signs), ulongs or longs.
    fn uints(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| self.bits() as u32).collect()
    }
    fn ints(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| self.bits() as i32).collect()
    }
    fn ulongs(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.bits()).collect()
    }
    fn longs(&mut self, n: usize) -> Vec<i64> {
        (0..n).map(|_| self.bits() as i64).collect()
    }
    /// Finite floats of every magnitude: random bits, the all-ones exponent (infinities and
    /// NaN) cleared.
    fn any_floats(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| f32::from_bits(self.bits() as u32 & !(1 << 30)))
            .collect()
    }
    fn any_doubles(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| f64::from_bits(self.bits() & !(1 << 62))).collect()
    }
}

/// Inputs larger than one work-group, and lengths that are not multiples of the work-group
/// sizes, for the examples where that matters: several groups of the parallel filter's scan,
/// partial last groups, bounds of 2-D and 3-D ranges.
fn larger_inputs() -> Vec<(&'static str, serde_json::Value)> {
    use serde_json::json;
    let mut r = Lcg(42);
    vec![
        ("thesis_6_1.lisp", json!({ "xs": r.floats(5000, 0.0, 16, 16.0) })),
        ("thesis_4_2.lisp", json!({ "xs": r.floats(777, 0.0, 16, 16.0) })),
        ("thesis_2_1.lisp", json!({ "xs": r.floats(1001, -4.0, 33, 4.0) })),
        ("thesis_2_2.lisp", json!({ "xs": r.floats(1002, -4.0, 33, 4.0) })),
        ("filter_glb.lisp", json!({ "xs": r.floats(20000, -8.0, 33, 2.0) })),
        ("filter_seq.lisp", json!({ "xs": r.floats(3000, -8.0, 33, 2.0) })),
        ("filter_rows.lisp", json!({ "m": r.matrix(50, 37) })),
        (
            "filter_zip_map.lisp",
            json!({ "xs": (0..999).map(|_| r.int(200) - 100).collect::<Vec<_>>() }),
        ),
        ("high_level.lisp", json!({ "xs": r.floats(3000, -4.0, 17, 2.0) })),
        ("chunk_sum.lisp", json!({ "xs": r.floats(4 * 1001, -4.0, 33, 4.0) })),
        ("wg_reduce.lisp", json!({ "xs": r.floats(16 * 300, -4.0, 33, 4.0) })),
        ("local_staging.lisp", json!({ "xs": r.floats(4 * 300, -4.0, 33, 4.0) })),
        (
            "split_join_nest.lisp",
            json!({ "xs": r.floats(4 * 301, -4.0, 33, 4.0) }),
        ),
        (
            "private_iterate.lisp",
            json!({ "xs": r.floats(4 * 257, -4.0, 33, 4.0) }),
        ),
        ("unroll.lisp", json!({ "xs": r.floats(4 * 257, -4.0, 33, 4.0) })),
        ("stencil3.lisp", json!({ "xs": r.floats(1000, -4.0, 33, 4.0) })),
        ("pad.lisp", json!({ "xs": r.floats(999, -4.0, 33, 4.0) })),
        ("reverse.lisp", json!({ "xs": r.floats(999, -4.0, 33, 4.0) })),
        ("reorder_stride.lisp", json!({ "xs": r.floats(1000, -4.0, 33, 4.0) })),
        ("generate.lisp", json!({ "xs": r.floats(1000, -4.0, 33, 4.0) })),
        ("as_vector.lisp", json!({ "xs": r.floats(4 * 301, -4.0, 33, 4.0) })),
        (
            "vector_dot.lisp",
            json!({ "xs": r.floats(4 * 150, -4.0, 33, 4.0), "ys": r.floats(4 * 150, -4.0, 33, 4.0) }),
        ),
        (
            "saxpy.lisp",
            json!({ "alpha": 1.5, "xs": r.floats(1000, -4.0, 33, 4.0), "ys": r.floats(1000, -4.0, 33, 4.0) }),
        ),
        (
            "at.lisp",
            json!({ "xs": r.floats(500, -4.0, 33, 4.0), "idx": (0..777).map(|_| r.int(500)).collect::<Vec<_>>() }),
        ),
        // Tuples holding vectors: struct offsets past the first element, partial work-groups.
        ("tuple_vector_result.lisp", json!({ "xs": r.matrix(1001, 4) })),
        (
            "tuple_vector_layout.lisp",
            json!({ "ps": (0..1001).map(|_| json!([r.floats(1, -4.0, 33, 4.0)[0], r.matrix(1, 4)[0]])).collect::<Vec<_>>() }),
        ),
        (
            "tuple_vector_gather.lisp",
            json!({
                "ps": (0..777).map(|_| json!([r.floats(1, -4.0, 33, 4.0)[0], r.matrix(1, 2)[0]])).collect::<Vec<_>>(),
                "ks": (0..777).map(|_| r.int(777)).collect::<Vec<_>>(),
            }),
        ),
        (
            "vector_if_at.lisp",
            json!({ "vs": r.matrix(777, 4), "ks": (0..777).map(|_| r.int(777) - 1).collect::<Vec<_>>() }),
        ),
        ("reduce_tuple_vector_acc.lisp", json!({ "vs": r.matrix(3 * 1001, 4) })),
        (
            "matvec.lisp",
            json!({ "m": r.matrix(70, 33), "x": r.floats(33, -4.0, 33, 4.0) }),
        ),
        ("matmul.lisp", json!({ "a": r.matrix(33, 17), "b": r.matrix(17, 20) })),
        ("transpose.lisp", json!({ "m": r.matrix(37, 53) })),
        ("tile_2d.lisp", json!({ "m": r.matrix(18, 22) })),
        (
            "map_3d.lisp",
            json!({ "t": (0..5).map(|_| r.matrix(7, 9)).collect::<Vec<_>>() }),
        ),
        // A host loop's filter-result state over several filter tiles.
        ("host_filter_loop.lisp", json!({ "xs": r.floats(9000, 0.0, 64, 16.0) })),
        // Integers of every bit pattern: wrapping, shifts, conversions, and reductions the
        // rewriter splits over several kernels with a padded last group.
        ("uint_xorshift.lisp", json!({ "seeds": r.uints(5003) })),
        ("ulong_xorshift64.lisp", json!({ "states": r.ulongs(3001) })),
        (
            "uint_hash.lisp",
            json!({ "rows": (0..1001).map(|_| (0..8).map(|_| r.int(256)).collect::<Vec<_>>()).collect::<Vec<_>>() }),
        ),
        (
            "long_sum.lisp",
            json!({ "ints": r.ints(20011), "longs": r.longs(20011), "us": r.uints(20011) }),
        ),
        (
            "uint_vectors.lisp",
            json!({ "us": r.uints(4 * 777), "ls": r.ulongs(4 * 777) }),
        ),
        (
            "int_bits.lisp",
            json!({ "xs": r.any_floats(1001), "ds": r.any_doubles(999), "us": r.uints(1003) }),
        ),
        (
            "int_wrap.lisp",
            // no divisor 0 (an error of the program); -1 and INT_MIN among the rest
            {
                let a: Vec<i32> = [vec![i32::MIN, i32::MAX, -1], r.ints(2001)].concat();
                let b: Vec<i32> = [vec![-1, 1, i32::MIN], r.ints(2001)].concat();
                let b: Vec<i32> = b.into_iter().map(|b| if b == 0 { 1 } else { b }).collect();
                json!({ "as": a, "bs": b })
            },
        ),
        // Scans over several tiles (37 of 8192 floats, more than a look-back trip of 32, a
        // partial last one), rows of two tiles of 8192 each, vectors in tiles of 1024, and a
        // compaction whose int scan spans three.
        ("scan_float.lisp", json!({ "xs": r.floats(300_007, -4.0, 33, 4.0) })),
        (
            "scan_int.lisp",
            json!({ "xs": (0..50_001).map(|_| r.int(2000) - 1000).collect::<Vec<_>>() }),
        ),
        ("scan_rows.lisp", json!({ "m": r.matrix(9, 9000) })),
        (
            "scan_radix_histogram.lisp",
            json!({ "keys": (0..5003).map(|_| r.int(1 << 20)).collect::<Vec<_>>() }),
        ),
        ("scan_compact.lisp", json!({ "xs": r.floats(20_011, -4.0, 33, 4.0) })),
    ]
}

#[test]
fn larger_inputs_equal_the_interpreter() {
    let Some(device) = device() else { return };
    let all = examples();
    let dir = std::env::temp_dir().join(format!("lift-it-larger-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    let cases: Vec<(&Example, PathBuf)> = larger_inputs()
        .into_iter()
        .map(|(name, data)| {
            let ex = all
                .iter()
                .find(|ex| ex.name == name)
                .unwrap_or_else(|| panic!("no example {name}"));
            let path = dir.join(name.replace(".lisp", ".json"));
            std::fs::write(&path, data.to_string()).expect("write the data");
            (ex, path)
        })
        .collect();
    check_all(
        &cases,
        |(ex, _)| &ex.name,
        |(ex, path)| {
            let data = vec![path.display().to_string()];
            let reference = lift::run_files(&ex.src, &data, &ex.header.sizes, &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
            let res = lift::run_files(&ex.src, &data, &ex.header.sizes, &cl_options(&device))
                .map_err(|e| format!("OpenCL: {}", e.render(&ex.name, &ex.src)))?;
            let (want, got) = (
                parse_json(&reference.json, "the interpreter's result"),
                parse_json(&res.json, "the OpenCL result"),
            );
            if !json_close(&want, &got) {
                let (w, g) = (want.to_string(), got.to_string());
                let at = w.bytes().zip(g.bytes()).take_while(|(a, b)| a == b).count();
                let from = at.saturating_sub(60);
                return Err(format!(
                    "results differ from byte {at}:\ninterpreter …{}\n     OpenCL …{}",
                    &w[from..(at + 60).min(w.len())],
                    &g[from..(at + 60).min(g.len())]
                ));
            }
            Ok(())
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The run-time checks (sizes against the data) come before anything runs on the device.
#[test]
fn run_time_errors_are_reported_on_opencl_too() {
    let Some(device) = device() else { return };
    let run_errors: Vec<Example> = error_examples()
        .into_iter()
        .filter(|ex| ex.header.error_at_run)
        .collect();
    check_all(
        &run_errors,
        |ex| &ex.name,
        |ex| {
            let expected = ex.header.error.as_ref().ok_or("no `;; error:` line")?;
            let data = vec![ex.data_path().ok_or("no `;; data:` line")?];
            match lift::run_files(&ex.src, &data, &ex.header.sizes, &cl_options(&device)) {
                Ok(res) => Err(format!("ran and gave {}, but should fail with: {expected}", res.json)),
                Err(e) if mentions(&e.render(&ex.name, &ex.src), expected) => Ok(()),
                Err(e) => Err(format!(
                    "the message does not contain `{expected}`:\n{}",
                    e.render(&ex.name, &ex.src)
                )),
            }
        },
    );
}

/// `--time` reports every kernel of a multi-kernel program (the parallel filter).
#[test]
fn timing_names_the_kernels() {
    let Some(device) = device() else { return };
    let ex = examples()
        .into_iter()
        .find(|ex| ex.name == "thesis_6_1.lisp")
        .expect("thesis_6_1.lisp");
    let data = vec![ex.data_path().expect("data")];
    let opts = lift::RunOptions {
        device,
        time: true,
        interp: false,
    };
    let res = lift::run_files(&ex.src, &data, &ex.header.sizes, &opts)
        .unwrap_or_else(|e| panic!("{}", e.render(&ex.name, &ex.src)));
    let timing = res.timing.expect("--time gives a timing report");
    let kernels: Vec<String> = lift::compile(&ex.src, &lift::Options::default())
        .unwrap_or_else(|e| panic!("{}", e.render(&ex.name, &ex.src)))
        .plan
        .expect("one kernel program")
        .kernels
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert!(!kernels.is_empty());
    let lines: Vec<&str> = timing.lines().collect();
    assert!(lines[0].starts_with("device: "), "{timing}");
    // `NAME: T ms` for every kernel of the plan, in order, then their total
    let ms = |line: &str, prefix: &str| -> f64 {
        line.strip_prefix(prefix)
            .and_then(|t| t.strip_suffix(" ms"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("expected `{prefix}T ms`, found `{line}` in:\n{timing}"))
    };
    assert_eq!(lines.len(), kernels.len() + 2, "{timing}");
    let times: Vec<f64> = kernels
        .iter()
        .zip(&lines[1..])
        .map(|(k, line)| ms(line, &format!("{k}: ")))
        .collect();
    let total = ms(lines[lines.len() - 1], "total kernel time: ");
    assert!(
        (total - times.iter().sum::<f64>()).abs() <= 0.001 * times.len() as f64,
        "the total is the kernels' sum:\n{timing}"
    );
}

// ---- Oclgrind ----------------------------------------------------------------------------

/// What Oclgrind prints for a real problem (learnt from hand-written faulty kernels, see
/// `racy_kernel_for_oclgrind`): "Invalid write of size 4 at global memory address ...",
/// "Read-write data race at local memory address ...", "Write-write data race ...",
/// "Uninitialized value written to global memory ...", "Work-group divergence detected
/// (barrier)", and API errors under `--check-api`. Oclgrind exits 0 regardless.
pub(crate) const OCLGRIND_PROBLEMS: &[&str] = &[
    "Invalid",
    "race",
    "Uninitialized",
    "uninitialized",
    "divergence",
    "error",
    "Error",
];

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// `lift` loads libOpenCL with `dlopen`, so the `LD_PRELOAD` interception of the `oclgrind`
/// wrapper alone does not reach it (the host would silently keep using PoCL). Oclgrind's ICD
/// library, named in `OCL_ICD_VENDORS`, makes the ICD loader offer only the Oclgrind device; the
/// wrapper's options reach it through the `OCLGRIND_*` variables that the wrapper sets.
pub(crate) fn oclgrind_setup() -> Option<(PathBuf, PathBuf)> {
    if std::env::var("LIFT_OCLGRIND").ok().as_deref() != Some("1") {
        eprintln!("skipping Oclgrind checks: set LIFT_OCLGRIND=1 to run them");
        return None;
    }
    // Asked for explicitly (CI does), so a missing tool is a failure rather than a skip.
    let Some(oclgrind) = which("oclgrind") else {
        panic!("LIFT_OCLGRIND=1 but `oclgrind` is not on the PATH (Debian package `oclgrind`)");
    };
    let icd = std::env::var_os("OCLGRIND_ICD").map(PathBuf::from).unwrap_or_else(|| {
        let prefix = oclgrind.parent().and_then(Path::parent).unwrap_or(Path::new("/usr"));
        prefix.join("lib/oclgrind/liboclgrind-rt-icd.so")
    });
    assert!(
        icd.is_file(),
        "Oclgrind's ICD library {} is missing (set OCLGRIND_ICD)",
        icd.display()
    );
    Some((oclgrind, icd))
}

pub(crate) fn under_oclgrind(oclgrind: &Path, icd: &Path, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(oclgrind);
    // `-cl-opt-disable`: Oclgrind 21.10's uninitialized-value checker stops with "Unsupported
    // instruction: freeze" on what LLVM's optimizer makes of `/` and `%` together (seen on
    // int_arith.lisp); unoptimized kernels also keep every access of the generated source.
    cmd.args([
        "--data-races",
        "--uninitialized",
        "--check-api",
        "--build-options",
        "-cl-opt-disable",
    ]);
    cmd.arg(program).args(args);
    cmd.env("OCL_ICD_VENDORS", icd).env_remove("LIFT_TEST_DEVICE");
    cmd
}

/// Runs every example with `oclgrind ... lift run`; also checks first that the setup really
/// runs on Oclgrind and that it catches a data race, so the pass cannot be vacuous.
#[test]
fn oclgrind() {
    let Some((oclgrind, icd)) = oclgrind_setup() else {
        return;
    };
    let lift_bin = Path::new(env!("CARGO_BIN_EXE_lift"));
    let cache = std::env::temp_dir().join(format!("lift-it-oclgrind-cache-{}", std::process::id()));

    let out = under_oclgrind(&oclgrind, &icd, lift_bin, &["devices"])
        .output()
        .expect("run oclgrind");
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains("Oclgrind"),
        "`lift devices` under oclgrind does not list the Oclgrind device:\n{listing}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let me = std::env::current_exe().expect("the test binary's path");
    let out = under_oclgrind(
        &oclgrind,
        &icd,
        &me,
        &[
            "--ignored",
            "--exact",
            "opencl::racy_kernel_for_oclgrind",
            "--nocapture",
        ],
    )
    .output()
    .expect("run oclgrind on the canary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("data race"),
        "Oclgrind did not report the deliberate data race; its output:\n{stderr}"
    );

    check_all(
        &runs_on_opencl(),
        |ex| &ex.name,
        |ex| {
            let data = ex.data_path().ok_or("no `;; data:` line")?;
            let path = ex.path.display().to_string();
            let mut args = vec!["run", path.as_str(), "--data", data.as_str()];
            for size in &ex.header.sizes {
                args.extend(["--size", size.as_str()]);
            }
            let out = under_oclgrind(&oclgrind, &icd, lift_bin, &args)
                .env("LIFT_CACHE_DIR", &cache)
                .output()
                .map_err(|e| format!("cannot run oclgrind: {e}"))?;
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() {
                return Err(format!("`lift run` failed under Oclgrind ({}):\n{stderr}", out.status));
            }
            if let Some(word) = OCLGRIND_PROBLEMS.iter().find(|w| stderr.contains(*w)) {
                return Err(format!("Oclgrind reports a problem (`{word}`):\n{stderr}"));
            }
            let want = parse_json(
                ex.header.expect.as_deref().ok_or("no `;; expect:` line")?,
                "the expect: line",
            );
            let got = parse_json(&String::from_utf8_lossy(&out.stdout), "the output of `lift run`");
            if !json_close(&want, &got) {
                return Err(format!("under Oclgrind: expected {want}\n      got {got}"));
            }
            Ok(())
        },
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// A deliberately racy kernel, run by `oclgrind` as a canary: every work-item writes its local
/// slot and, with no barrier, reads its neighbour's. Ignored in normal runs.
#[test]
#[ignore = "run by the `oclgrind` test under Oclgrind"]
fn racy_kernel_for_oclgrind() {
    use host_runner::{BufferInit, BufferSpec, KernelArg, Launch, Plan, ReadSpec, RunOptions, Session};
    let source = "kernel void racy(global float* out, local float* tmp) {\n\
                  \x20   int l = get_local_id(0);\n\
                  \x20   tmp[l] = (float)l;\n\
                  \x20   out[get_global_id(0)] = tmp[(l + 1) % get_local_size(0)];\n\
                  }\n";
    let plan = Plan {
        source: source.to_string(),
        build_options: String::new(),
        buffers: vec![BufferSpec {
            name: "out".into(),
            bytes: 16,
            init: BufferInit::Zeroed,
        }],
        launches: vec![Launch {
            kernel: "racy".into(),
            args: vec![KernelArg::Buffer(0), KernelArg::Local(16)],
            global: vec![4],
            local: Some(vec![4]),
        }],
        reads: vec![ReadSpec::Whole(0)],
    };
    let mut session = Session::open_with_cache_dir(None, None).expect("open the Oclgrind device");
    session.run(&plan, &RunOptions::default()).expect("run the racy kernel");
}
