//! The single integration-test binary of `lift` (one linked binary for every test, as
//! `research/style.md` §6.2 recommends).
//!
//! The test corpus is `examples/`: each `examples/*.lisp` starts with a header of `;; key: value`
//! lines that this harness reads (see [`Header`]); `examples/errors/*.lisp` are programs that
//! must fail, with the expected message in their header.
//!
//! - `snapshots`: the typed program and the generated OpenCL of every example, and the rendered
//!   diagnostic of every error example (insta snapshots in `snapshots/`).
//! - `interp`: every example through the reference interpreter equals its `expect:` line.
//! - `opencl`: every example on an OpenCL device equals the interpreter; under Oclgrind too
//!   when `LIFT_OCLGRIND=1`.
//! - `cli`: exit codes and messages of the `lift` binary.
//! - `filter`: every form of the single-pass filter at its tile edges, random filters (proptest)
//!   and the device-side check of a filter result's length, against the interpreter.
//! - `fuzz`: random bytes and mutated examples never make the front end panic.
//! - `mpi` (feature `mpi`): programs over 2 and 3 MPI ranks (`mpirun`) equal the interpreter.

mod app;
mod batch_rules;
mod builtins;
mod c_library;
mod cgo17;
mod cli;
mod codegen;
mod devices;
mod filter;
mod fuzz;
mod host;
mod indep_forms;
mod indep_grid;
mod indep_mm;
mod interp;
mod known_sizes;
#[cfg(feature = "mpi")]
mod mpi;
mod nbody_rows;
mod nbody_step;
mod onekernel;
mod opencl;
mod register_blocking;
mod rewritten_variants;
mod rows_layouts;
mod scan_warps;
mod snapshots;
mod specialised_sizes;
mod stencil_suite;
mod stencil_tiles;
mod tensor_cores;
mod views_slide;

use std::path::{Path, PathBuf};

/// The repository's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// One program of the corpus with its parsed header.
pub struct Example {
    /// File name, e.g. `thesis_2_1.lisp` (or `errors/zip_lengths.lisp` for error examples):
    /// used in snapshot names and messages, never an absolute path.
    pub name: String,
    pub path: PathBuf,
    pub src: String,
    pub header: Header,
}

/// The `;; key: value` lines at the top of an example.
///
/// ```text
/// ;; data: scale.json            data file, relative to the example's folder
/// ;; expect: [2.0, 4.0]          the exact expected result (JSON), computed independently
/// ;; snapshot-cl: no             do not snapshot the generated OpenCL
/// ;; opencl: no                  do not run on OpenCL (high-level programs, until issue 4)
/// ;; error: did you mean         a substring of the expected error message
/// ;; error-at: run               the error comes when running with the data, not compiling
/// ;; sizes: K=12                  sizes the data does not give (`--size`), space-separated
/// ```
#[derive(Default, Debug)]
pub struct Header {
    pub data: Option<String>,
    pub expect: Option<String>,
    pub snapshot_cl: bool,
    pub opencl: bool,
    pub error: Option<String>,
    pub error_at_run: bool,
    pub sizes: Vec<String>,
}

impl Header {
    pub fn parse(src: &str) -> Header {
        let mut h = Header {
            snapshot_cl: true,
            opencl: true,
            ..Header::default()
        };
        for line in src.lines() {
            let Some(rest) = line.strip_prefix(";;") else {
                continue;
            };
            let Some((key, value)) = rest.split_once(':') else {
                continue;
            };
            let value = value.trim().to_string();
            match key.trim() {
                "data" => h.data = Some(value),
                "expect" => h.expect = Some(value),
                "snapshot-cl" => h.snapshot_cl = value != "no",
                "opencl" => h.opencl = value != "no",
                "error" => h.error = Some(value),
                "error-at" => h.error_at_run = value == "run",
                "sizes" => h.sizes = value.split_whitespace().map(str::to_string).collect(),
                _ => {}
            }
        }
        h
    }
}

impl Example {
    /// The data file's path as a string for `lift::run_files`.
    pub fn data_path(&self) -> Option<String> {
        let data = self.header.data.as_ref()?;
        Some(
            self.path
                .parent()
                .expect("an example is in a folder")
                .join(data)
                .display()
                .to_string(),
        )
    }
}

fn load_dir(dir: &Path, prefix: &str) -> Vec<Example> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lisp"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let file = path.file_name().expect("a file name").to_string_lossy();
            Example {
                name: format!("{prefix}{file}"),
                header: Header::parse(&src),
                path,
                src,
            }
        })
        .collect()
}

/// Every `examples/*.lisp`, sorted by name.
pub fn examples() -> Vec<Example> {
    let all = load_dir(&examples_dir(), "");
    assert!(
        all.len() >= 20,
        "expected the examples corpus in {}",
        examples_dir().display()
    );
    all
}

/// Every `examples/errors/*.lisp`, sorted by name.
pub fn error_examples() -> Vec<Example> {
    load_dir(&examples_dir().join("errors"), "errors/")
}

/// The interpreter as a `lift::run_files` option set.
pub fn interp_options() -> lift::RunOptions {
    lift::RunOptions {
        device: None,
        time: false,
        interp: true,
    }
}

/// Whether two JSON results agree: same shape, equal booleans and integers, floats within a
/// relative 1e-4 (plus a tiny absolute slack so that values near zero compare sensibly).
pub fn json_close(expected: &serde_json::Value, got: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (expected, got) {
        (J::Array(a), J::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_close(x, y)),
        (J::Number(a), J::Number(b)) => {
            // integers exactly, also the ulongs beyond i64
            let int = |n: &serde_json::Number| n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            if let (Some(a), Some(b)) = (int(a), int(b)) {
                return a == b;
            }
            let (a, b) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
            a == b || (a - b).abs() <= 1e-4 * a.abs().max(b.abs()) + 1e-6
        }
        _ => expected == got,
    }
}

/// Parses a JSON text, naming `what` in the panic message when it is not JSON.
pub fn parse_json(text: &str, what: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} is not valid JSON ({e}): {text}"))
}

/// Runs `check` on every item, collecting failures, and panics once listing them all, so one
/// failing example does not hide the others.
pub fn check_all<T>(items: &[T], name: impl Fn(&T) -> &str, check: impl Fn(&T) -> Result<(), String>) {
    let mut failures = vec![];
    for item in items {
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(item)));
        match res {
            Ok(Ok(())) => {}
            Ok(Err(msg)) => failures.push(format!("{}: {msg}", name(item))),
            Err(panic) => failures.push(format!("{}: panicked: {}", name(item), panic_text(&panic))),
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {} failed:\n\n{}",
            failures.len(),
            items.len(),
            failures.join("\n\n")
        );
    }
}

/// Whether a rendered diagnostic says `needle`. The renderer wraps long messages (continuation
/// lines start with `│`), so both are compared with the frame characters removed and every
/// run of whitespace made one space.
pub fn mentions(rendered: &str, needle: &str) -> bool {
    let flat = |s: &str| -> String {
        s.lines()
            .map(|l| l.trim_start().trim_start_matches(['│', '×', '·', '|']).trim())
            .collect::<Vec<_>>()
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    flat(rendered).contains(&flat(needle))
}

pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else {
        "(non-string panic)".to_string()
    }
}
