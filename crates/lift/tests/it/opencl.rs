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
fn device() -> Option<Option<String>> {
    match host_runner::devices() {
        Err(e) => {
            eprintln!("skipping OpenCL tests: {e}");
            None
        }
        Ok(devs) if devs.is_empty() => {
            eprintln!("skipping OpenCL tests: no OpenCL device");
            None
        }
        Ok(_) => Some(std::env::var("LIFT_TEST_DEVICE").ok().filter(|d| !d.is_empty())),
    }
}

fn cl_options(device: &Option<String>) -> lift::RunOptions {
    lift::RunOptions { device: device.clone(), time: false, interp: false }
}

fn runs_on_opencl() -> Vec<Example> {
    examples().into_iter().filter(|ex| ex.header.opencl).collect()
}

#[test]
fn examples_equal_the_interpreter() {
    let Some(device) = device() else { return };
    check_all(&runs_on_opencl(), |ex| &ex.name, |ex| {
        let data = vec![ex.data_path().ok_or("no `;; data:` line")?];
        let reference = lift::run_files(&ex.src, &data, &[], &interp_options()).map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
        let res = lift::run_files(&ex.src, &data, &[], &cl_options(&device)).map_err(|e| format!("OpenCL: {}", e.render(&ex.name, &ex.src)))?;
        let (want, got) = (parse_json(&reference.json, "the interpreter's result"), parse_json(&res.json, "the OpenCL result"));
        if !json_close(&want, &got) {
            return Err(format!("interpreter {want}\n     OpenCL {got}"));
        }
        Ok(())
    });
}

/// The run-time checks (sizes against the data) come before anything runs on the device.
#[test]
fn run_time_errors_are_reported_on_opencl_too() {
    let Some(device) = device() else { return };
    let run_errors: Vec<Example> = error_examples().into_iter().filter(|ex| ex.header.error_at_run).collect();
    check_all(&run_errors, |ex| &ex.name, |ex| {
        let expected = ex.header.error.as_ref().ok_or("no `;; error:` line")?;
        let data = vec![ex.data_path().ok_or("no `;; data:` line")?];
        match lift::run_files(&ex.src, &data, &[], &cl_options(&device)) {
            Ok(res) => Err(format!("ran and gave {}, but should fail with: {expected}", res.json)),
            Err(e) if mentions(&e.render(&ex.name, &ex.src), expected) => Ok(()),
            Err(e) => Err(format!("the message does not contain `{expected}`:\n{}", e.render(&ex.name, &ex.src))),
        }
    });
}

/// `--time` reports every kernel of a multi-kernel program (the parallel filter).
#[test]
fn timing_names_the_kernels() {
    let Some(device) = device() else { return };
    let ex = examples().into_iter().find(|ex| ex.name == "thesis_6_1.lisp").expect("thesis_6_1.lisp");
    let data = vec![ex.data_path().expect("data")];
    let opts = lift::RunOptions { device, time: true, interp: false };
    let res = lift::run_files(&ex.src, &data, &[], &opts).unwrap_or_else(|e| panic!("{}", e.render(&ex.name, &ex.src)));
    let timing = res.timing.expect("--time gives a timing report");
    assert!(!timing.trim().is_empty(), "empty timing report");
}

// ---- Oclgrind ----------------------------------------------------------------------------

/// What Oclgrind prints for a real problem (learnt from hand-written faulty kernels, see
/// `racy_kernel_for_oclgrind`): "Invalid write of size 4 at global memory address ...",
/// "Read-write data race at local memory address ...", "Write-write data race ...",
/// "Uninitialized value written to global memory ...", "Work-group divergence detected
/// (barrier)", and API errors under `--check-api`. Oclgrind exits 0 regardless.
const OCLGRIND_PROBLEMS: &[&str] = &["Invalid", "race", "Uninitialized", "uninitialized", "divergence", "error", "Error"];

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// `lift` loads libOpenCL with `dlopen`, so the `LD_PRELOAD` interception of the `oclgrind`
/// wrapper alone does not reach it (the host would silently keep using PoCL). Oclgrind's ICD
/// library, named in `OCL_ICD_VENDORS`, makes the ICD loader offer only the Oclgrind device; the
/// wrapper's options reach it through the `OCLGRIND_*` variables that the wrapper sets.
fn oclgrind_setup() -> Option<(PathBuf, PathBuf)> {
    if std::env::var("LIFT_OCLGRIND").ok().as_deref() != Some("1") {
        eprintln!("skipping Oclgrind checks: set LIFT_OCLGRIND=1 to run them");
        return None;
    }
    let Some(oclgrind) = which("oclgrind") else {
        eprintln!("skipping Oclgrind checks: `oclgrind` is not on the PATH (Debian package `oclgrind`)");
        return None;
    };
    let icd = std::env::var_os("OCLGRIND_ICD").map(PathBuf::from).unwrap_or_else(|| {
        let prefix = oclgrind.parent().and_then(Path::parent).unwrap_or(Path::new("/usr"));
        prefix.join("lib/oclgrind/liboclgrind-rt-icd.so")
    });
    assert!(icd.is_file(), "Oclgrind's ICD library {} is missing (set OCLGRIND_ICD)", icd.display());
    Some((oclgrind, icd))
}

fn under_oclgrind(oclgrind: &Path, icd: &Path, program: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(oclgrind);
    // `-cl-opt-disable`: Oclgrind 21.10's uninitialized-value checker stops with "Unsupported
    // instruction: freeze" on what LLVM's optimizer makes of `/` and `%` together (seen on
    // int_arith.lisp); unoptimized kernels also keep every access of the generated source.
    cmd.args(["--data-races", "--uninitialized", "--check-api", "--build-options", "-cl-opt-disable"]);
    cmd.arg(program).args(args);
    cmd.env("OCL_ICD_VENDORS", icd).env_remove("LIFT_TEST_DEVICE");
    cmd
}

/// Runs every example with `oclgrind ... lift run`; also checks first that the setup really
/// runs on Oclgrind and that it catches a data race, so the pass cannot be vacuous.
#[test]
fn oclgrind() {
    let Some((oclgrind, icd)) = oclgrind_setup() else { return };
    let lift_bin = Path::new(env!("CARGO_BIN_EXE_lift"));
    let cache = std::env::temp_dir().join(format!("lift-it-oclgrind-cache-{}", std::process::id()));

    let out = under_oclgrind(&oclgrind, &icd, lift_bin, &["devices"]).output().expect("run oclgrind");
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("Oclgrind"), "`lift devices` under oclgrind does not list the Oclgrind device:\n{listing}\n{}", String::from_utf8_lossy(&out.stderr));

    let me = std::env::current_exe().expect("the test binary's path");
    let out = under_oclgrind(&oclgrind, &icd, &me, &["--ignored", "--exact", "opencl::racy_kernel_for_oclgrind", "--nocapture"])
        .output()
        .expect("run oclgrind on the canary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("data race"), "Oclgrind did not report the deliberate data race; its output:\n{stderr}");

    check_all(&runs_on_opencl(), |ex| &ex.name, |ex| {
        let data = ex.data_path().ok_or("no `;; data:` line")?;
        let path = ex.path.display().to_string();
        let out = under_oclgrind(&oclgrind, &icd, lift_bin, &["run", &path, "--data", &data])
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
        let want = parse_json(ex.header.expect.as_deref().ok_or("no `;; expect:` line")?, "the expect: line");
        let got = parse_json(&String::from_utf8_lossy(&out.stdout), "the output of `lift run`");
        if !json_close(&want, &got) {
            return Err(format!("under Oclgrind: expected {want}\n      got {got}"));
        }
        Ok(())
    });
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
        buffers: vec![BufferSpec { name: "out".into(), bytes: 16, init: BufferInit::Zeroed }],
        launches: vec![Launch { kernel: "racy".into(), args: vec![KernelArg::Buffer(0), KernelArg::Local(16)], global: vec![4], local: Some(vec![4]) }],
        reads: vec![ReadSpec::Whole(0)],
    };
    let mut session = Session::open_with_cache_dir(None, None).expect("open the Oclgrind device");
    session.run(&plan, &RunOptions::default()).expect("run the racy kernel");
}
