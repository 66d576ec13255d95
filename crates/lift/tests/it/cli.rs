//! The `lift` binary: exit codes, where output goes, and messages on stderr. Commands run from
//! the repository root with relative paths, exactly as the README shows them.

use crate::{json_close, mentions, parse_json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("run the lift binary")
}

/// `lift` with its tuning cache in `dir`.
fn lift_cached<S: AsRef<std::ffi::OsStr>>(args: &[S], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .current_dir(repo_root())
        .env("LIFT_CACHE_DIR", dir)
        .output()
        .expect("run the lift binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a failure: non-zero exit, nothing on stdout, the message on stderr, no panic.
fn assert_fails(out: &Output, needle: &str) -> String {
    let stderr = text(&out.stderr);
    assert!(
        !out.status.success(),
        "expected a failure, got {}; stdout:\n{}",
        out.status,
        text(&out.stdout)
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a user error exits with 1; stderr:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "the binary panicked:\n{stderr}");
    assert!(
        mentions(&stderr, needle),
        "stderr does not mention `{needle}`:\n{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "a failure prints nothing on stdout:\n{}",
        text(&out.stdout)
    );
    stderr
}

fn assert_succeeds(out: &Output) -> String {
    assert!(
        out.status.success(),
        "expected success, got {}; stderr:\n{}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// A fresh scratch folder for output files.
/// The printed result of an OpenCL run equals the interpreter's (within float tolerance).
fn assert_equals_interpreter(interpreter: &str, opencl: &str, src: &str) {
    assert!(
        json_close(
            &parse_json(interpreter, "the interpreter's result"),
            &parse_json(opencl, "the OpenCL result")
        ),
        "{src}\ninterpreter {interpreter}\n     OpenCL {opencl}"
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lift-it-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

const THESIS_2_1_RESULT: &str = "[2.0, 4.0, 6.0, 8.0, 10.0, 12.0]";

#[test]
fn check_prints_the_type() {
    let stdout = assert_succeeds(&lift(&["check", "examples/thesis_2_1.lisp"]));
    assert!(
        stdout.contains("[float]N"),
        "the type of program 2.1 mentions [float]N:\n{stdout}"
    );
}

#[test]
fn check_of_a_bad_program_names_the_place() {
    let out = lift(&["check", "examples/errors/unknown_name.lisp"]);
    let stderr = assert_fails(&out, "did you mean `mapGlb`?");
    assert!(
        stderr.contains("examples/errors/unknown_name.lisp:4:"),
        "the message names file:line:col:\n{stderr}"
    );
}

#[test]
fn check_of_a_missing_file() {
    assert_fails(
        &lift(&["check", "examples/no_such_program.lisp"]),
        "examples/no_such_program.lisp",
    );
}

#[test]
fn compile_emits_types() {
    let stdout = assert_succeeds(&lift(&["compile", "examples/thesis_4_2.lisp", "--emit", "types"]));
    assert!(
        stdout.contains("∃"),
        "the typed program 4.2 shows its existential type:\n{stdout}"
    );
}

#[test]
fn run_with_the_interpreter() {
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        "examples/thesis_2_1.json",
        "--backend",
        "interp",
    ]);
    let stdout = assert_succeeds(&out);
    let want = parse_json(THESIS_2_1_RESULT, "expected");
    assert!(json_close(&want, &parse_json(&stdout, "stdout")), "got {stdout}");
}

#[test]
fn run_with_a_missing_data_file() {
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        "examples/no_such_data.json",
        "--backend",
        "interp",
    ]);
    assert_fails(&out, "no_such_data.json");
}

#[test]
fn run_time_error_exits_non_zero() {
    let out = lift(&[
        "run",
        "examples/errors/split_runtime.lisp",
        "--data",
        "examples/errors/split_runtime.json",
        "--backend",
        "interp",
    ]);
    assert_fails(&out, "not a multiple of 3");
}

#[test]
fn run_writes_json() {
    let dir = scratch("json");
    let file = dir.join("out.json");
    let file_arg = file.display().to_string();
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        "examples/thesis_2_1.json",
        "--backend",
        "interp",
        "-o",
        &file_arg,
    ]);
    let stdout = assert_succeeds(&out);
    assert!(
        stdout.trim().is_empty(),
        "with -o the result goes to the file, not stdout:\n{stdout}"
    );
    let written = std::fs::read_to_string(&file).expect("out.json was written");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        json_close(
            &parse_json(THESIS_2_1_RESULT, "expected"),
            &parse_json(&written, "out.json")
        ),
        "out.json holds {written}"
    );
}

#[test]
fn run_writes_npy() {
    let dir = scratch("npy");
    let file = dir.join("out.npy");
    let file_arg = file.display().to_string();
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        "examples/thesis_2_1.json",
        "--backend",
        "interp",
        "-o",
        &file_arg,
    ]);
    assert_succeeds(&out);
    let bytes = std::fs::read(&file).expect("out.npy was written");
    let _ = std::fs::remove_dir_all(&dir);
    // NumPy format 1.0: magic, version, little-endian header length, a dict header, raw data.
    assert!(
        bytes.starts_with(b"\x93NUMPY"),
        "not an .npy file: {:?}",
        &bytes[..bytes.len().min(16)]
    );
    let header_len = match bytes[6] {
        1 => u16::from_le_bytes([bytes[8], bytes[9]]) as usize + 10,
        _ => u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize + 12,
    };
    let header = String::from_utf8_lossy(&bytes[..header_len]);
    assert!(header.contains("'<f4'"), "float32 little-endian data: {header}");
    assert!(header.replace(' ', "").contains("'shape':(6,)"), "shape (6,): {header}");
    let values: Vec<f32> = bytes[header_len..]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(values, vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
}

/// `-o` picks the format from the extension (LANGUAGE.md: `out.json|out.npy`, in any case); a
/// name with another extension, or none, is a usage error that names the accepted ones, and no
/// file is written.
#[test]
fn run_output_format_follows_the_extension() {
    let dir = scratch("out-ext");
    let run = |file: &std::path::Path| {
        lift(&[
            "run",
            "examples/thesis_2_1.lisp",
            "--data",
            "examples/thesis_2_1.json",
            "--backend",
            "interp",
            "-o",
            &file.display().to_string(),
        ])
    };
    for bad in ["out.txt", "out", "out.json.bak"] {
        let file = dir.join(bad);
        let out = run(&file);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("`.json`") && stderr.contains("`.npy`"),
            "{bad}: {stderr}"
        );
        assert!(!file.exists(), "{bad} was written");
    }
    let upper = dir.join("OUT.JSON");
    assert_succeeds(&run(&upper));
    let written = std::fs::read_to_string(&upper).expect("OUT.JSON was written");
    assert!(written.trim_start().starts_with('['), "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--size` naming no size variable of the program is the same usage error (2) for every
/// command that takes sizes; `explore` used to ignore it and report on other sizes.
#[test]
fn unknown_size_names_are_usage_errors_everywhere() {
    for args in [
        &[
            "run",
            "examples/hl_sum.lisp",
            "--data",
            "examples/hl_sum.json",
            "--size",
            "Q=3",
        ][..],
        &["explore", "examples/hl_sum.lisp", "--size", "Q=3"][..],
        &["tune", "examples/hl_sum.lisp", "--size", "Q=3"][..],
        &["bench", "examples/hl_sum.lisp", "--size", "N=64", "--check-size", "Q=3"][..],
    ] {
        let out = lift(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("has no size variable `Q`") && stderr.contains("did you mean `N`?"),
            "{args:?}: {stderr}"
        );
    }
}

/// A check on a filter result's length that fails inside a host `iterate` is decoded as such
/// (it was reported as an `at` out of range): the same place and count as the interpreter's
/// error, the count of the step that failed rather than of the last step, exit 1. Skipped
/// without a device.
#[test]
fn host_loops_report_failed_length_checks_like_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let prog = "examples/errors/host_split_count.lisp";
    let data = "examples/errors/host_split_count.json";
    let mut args = vec!["run", prog, "--data", data];
    if let Some(d) = &device {
        args.extend(["--device", d.as_str()]);
    }
    let cl = lift(&args);
    let interp = lift(&["run", prog, "--data", data, "--backend", "interp"]);
    let first_place = |stderr: &str| {
        let at = stderr.find(&format!("{prog}:")).expect("a place");
        stderr[at..].split_whitespace().next().unwrap_or("").to_string()
    };
    let (cl_err, interp_err) = (
        assert_fails(&cl, "not a multiple of 4"),
        assert_fails(&interp, "not a multiple of 4"),
    );
    assert_eq!(cl.status.code(), Some(1), "{cl_err}");
    assert_eq!(interp.status.code(), Some(1), "{interp_err}");
    assert_eq!(first_place(&cl_err), first_place(&interp_err), "{cl_err}\n{interp_err}");
    assert!(interp_err.contains("length 7"), "{interp_err}");
    assert!(
        cl_err.contains("has 7 elements") && !cl_err.contains("`at`"),
        "{cl_err}"
    );
}

/// `.npy` input per parameter: write program 2.1's input as an .npy file and run on it.
#[test]
fn run_reads_npy() {
    let dir = scratch("npy-in");
    let input = dir.join("xs.npy");
    let mut header = String::from("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in [1.5f32, -2.0, 0.25] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(&input, bytes).expect("write xs.npy");
    let data_arg = format!("xs={}", input.display());
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        &data_arg,
        "--backend",
        "interp",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = assert_succeeds(&out);
    assert!(
        json_close(
            &parse_json("[3.0, -4.0, 0.5]", "expected"),
            &parse_json(&stdout, "stdout")
        ),
        "got {stdout}"
    );
}

/// The default backend is OpenCL; skipped without a device.
#[test]
fn run_on_opencl() {
    let Some(device) = crate::opencl::device() else { return };
    let mut args = vec!["run", "examples/thesis_2_1.lisp", "--data", "examples/thesis_2_1.json"];
    if let Some(d) = &device {
        args.extend(["--device", d.as_str()]);
    }
    let stdout = assert_succeeds(&lift(&args));
    assert!(
        json_close(
            &parse_json(THESIS_2_1_RESULT, "expected"),
            &parse_json(&stdout, "stdout")
        ),
        "got {stdout}"
    );
}

/// `lift tune program --size ... --top top --repeats 1` on the test device, with a tuning
/// cache of its own: its output and the rows of its JSON table.
fn tune(device: &Option<String>, name: &str, sizes: &[&str], top: usize) -> (Output, Vec<serde_json::Value>) {
    let dir = scratch(&format!("tune-{name}"));
    let table = dir.join("t.json");
    let mut args = vec!["tune".to_string(), format!("examples/{name}.lisp")];
    for s in sizes {
        args.extend(["--size".to_string(), s.to_string()]);
    }
    args.extend([
        "--top".to_string(),
        top.to_string(),
        "--repeats".into(),
        "1".into(),
        "--out".into(),
    ]);
    args.push(table.display().to_string());
    if let Some(d) = device {
        args.extend(["--devices".into(), d.clone()]);
    }
    let out = lift_cached(&args, &dir);
    let rows = if out.status.success() {
        let rows = parse_json(&std::fs::read_to_string(&table).expect("the table"), "the table");
        rows.as_array().expect("an array of rows").clone()
    } else {
        vec![]
    };
    let _ = std::fs::remove_dir_all(&dir);
    (out, rows)
}

/// `lift tune` checks every variant against the interpreter: a partial reduction of a large
/// float sum passes although it differs from a sequential float sum, and the progress display
/// stays off when stderr is not a terminal. Skipped without a device.
#[test]
fn tune_checks_variants_and_keeps_stderr_clean() {
    let Some(device) = crate::opencl::device() else { return };
    let (out, rows) = tune(&device, "hl_sum", &["N=262144"], 3);
    let stdout = assert_succeeds(&out);
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains('\r') && !stderr.contains('\x1b'),
        "progress drawn on a non-terminal stderr:\n{stderr:?}"
    );
    assert!(!stdout.contains("WRONG"), "a correct variant flagged wrong:\n{stdout}");
    assert!(rows.len() >= 2, "{rows:?}");
    for r in &rows {
        let check = r["check"].as_str().unwrap_or("");
        assert!(
            ["ok", "unchecked"].contains(&check),
            "every variant checks out or says why not: {r}"
        );
        if check == "ok" {
            assert_eq!(r["correct"], serde_json::Value::Bool(true), "{r}");
        }
    }
    assert!(
        rows.iter().any(|r| r["variant"] != 0 && r["check"] == "ok"),
        "a partial reduction is checked: {rows:?}"
    );
}

/// Every high-level example explores, tunes on the test device at small sizes and all its
/// variants give the interpreter's result (issue 4's check on PoCL in CI). Skipped without a
/// device.
#[test]
fn high_level_examples_tune_and_check() {
    let Some(device) = crate::opencl::device() else { return };
    let cases: [(&str, &[&str]); 7] = [
        ("hl_scale", &["N=4096"]),
        ("hl_sum", &["N=65536"]),
        ("hl_dot", &["N=65536"]),
        ("hl_matvec", &["M=64", "N=128"]),
        ("hl_mm", &["M=32", "K=64", "N=32"]),
        ("hl_stencil", &["N=4096"]),
        ("hl_filter_map", &["N=4096"]),
    ];
    for (name, sizes) in cases {
        let (out, rows) = tune(&device, name, sizes, 4);
        let stdout = assert_succeeds(&out);
        // (a filter is not rewritten: its program has one variant besides the naive one)
        let least = if name == "hl_filter_map" { 2 } else { 3 };
        assert!(rows.len() >= least, "{name}: {stdout}");
        for r in &rows {
            assert_eq!(
                r["check"], "ok",
                "{name}: every variant runs and equals the interpreter: {r}\n{stdout}"
            );
        }
    }
}

/// A size given on the command line that does not fit `i64` is named as written.
#[test]
fn size_beyond_64_bits_is_a_clear_error() {
    let out = lift(&[
        "run",
        "examples/thesis_2_1.lisp",
        "--data",
        "examples/thesis_2_1.json",
        "--backend",
        "interp",
        "--size",
        "N=99999999999999999999",
    ]);
    // a flag value out of range is a usage error (2), as clap's numeric flags are
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("N=99999999999999999999 does not fit a 64-bit integer"),
        "{}",
        text(&out.stderr)
    );
}

/// Size arithmetic that overflows once the sizes are known is a user error, not a panic.
#[test]
fn size_arithmetic_overflow_is_a_clear_error() {
    let dir = scratch("overflow");
    let prog = dir.join("nn.lisp");
    let data = dir.join("one.json");
    std::fs::write(
        &prog,
        "(lift (N) ((array-type float (* N N))) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))",
    )
    .unwrap();
    std::fs::write(&data, r#"{"xs": [1.0]}"#).unwrap();
    let (prog, data) = (prog.to_str().unwrap(), data.to_str().unwrap());
    for backend in ["interp", "opencl"] {
        let out = lift(&[
            "run",
            prog,
            "--data",
            data,
            "--backend",
            backend,
            "--size",
            "N=4294967296",
        ]);
        let stderr = assert_fails(&out, "does not fit a 64-bit integer");
        assert!(stderr.contains("(N*N)"), "names the length:\n{stderr}");
    }
    // A length that no input has: found before code generation, at its place in the program.
    let gen = dir.join("gen.lisp");
    std::fs::write(
        &gen,
        "(lift (N) () (lambda () (toGlobal (mapGlb (lambda (i) (to-float i)) (generate (* N N) (lambda (i) i))))))",
    )
    .unwrap();
    for backend in ["interp", "opencl"] {
        let out = lift(&[
            "run",
            gen.to_str().unwrap(),
            "--backend",
            backend,
            "--size",
            "N=4294967296",
        ]);
        let stderr = assert_fails(&out, "the length (N*N) does not fit a 64-bit integer");
        assert!(stderr.contains("gen.lisp:1:"), "{stderr}");
        assert!(!stderr.contains("v_"), "no generated names:\n{stderr}");
    }
}

/// `lift ... | head -c 1`: the reader closes the pipe early; lift stops quietly, as `cat` does.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::io::Read;
    let dir = scratch("pipe");
    let data = dir.join("big.json");
    let xs: Vec<String> = (0..200_000).map(|i| format!("{i}.0")).collect();
    std::fs::write(&data, format!("{{\"xs\": [{}]}}", xs.join(","))).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(["run", "examples/thesis_2_1.lisp", "--backend", "interp", "--data"])
        .arg(&data)
        .current_dir(repo_root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the lift binary");
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here, before lift has written everything.
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(first[0], b'[');
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// Usage errors (clap's) exit with 2, user errors with 1; neither is a panic's 101.
#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &["frobnicate"][..],
        &["run"][..],
        &["run", "examples/thesis_2_1.lisp", "--backend", "gpu"][..],
        &["compile", "examples/thesis_2_1.lisp", "--no-such-flag"][..],
    ] {
        let out = lift(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!text(&out.stderr).contains("panicked"), "{args:?}");
    }
    assert_succeeds(&lift(&["--help"]));
    assert_fails(&lift(&["check", "examples/errors/zip_lengths.lisp"]), "zip");
}

/// Programs of one shape nested `k` deep.
fn nested(shape: &str, k: usize) -> String {
    let lift = |ty: &str, f: &str| {
        format!("(lift (N) ((array-type {ty} N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) {f}) xs))))")
    };
    match shape {
        "scalar" => lift("float", &(0..k).fold("x".to_string(), |e, _| format!("(+ {e} 1.0f)"))),
        "pipeline" => {
            let fs = vec!["(mapSeq (lambda (y) (* y 2.0f)))"; k].join(" ");
            format!(
                "(lift (N) ((array-type float N)) (lambda (xs) \
                 (toGlobal (mapGlb (lambda (r) (o {fs} r)) (split #1 xs)))))"
            )
        }
        "definitions" => {
            let mut src = "(define (f0 x) (+ x 1.0f))\n".to_string();
            for i in 1..k {
                src += &format!("(define (f{i} x) (f{} (+ x 1.0f)))\n", i - 1);
            }
            src + &lift("float", &format!("(f{} x)", k - 1))
        }
        "types" => lift(
            &(0..k).fold("float".to_string(), |t, _| format!("(array-type {t} #1)")),
            "x",
        ),
        "sizes" => format!(
            "(lift (N) ((array-type float {})) (lambda (xs) (toGlobal (mapGlb (lambda (x) x) xs))))",
            (0..k).fold("N".to_string(), |n, _| format!("(+ {n} 1)"))
        ),
        _ => unreachable!("unknown shape {shape}"),
    }
}

/// One depth limit, in the reader: deeper input is a clean error with a place (exit 1), and
/// every command handles the deepest program it accepts without overflowing its stack.
#[test]
fn nesting_is_bounded_by_the_reader_and_every_pass_handles_the_bound() {
    let dir = scratch("depth");
    let data = dir.join("two.json");
    std::fs::write(&data, r#"{"xs": [1.0, 2.0]}"#).unwrap();
    let data = data.to_str().unwrap();
    let write = |name: &str, src: &str| {
        let p = dir.join(name);
        std::fs::write(&p, src).unwrap();
        p.to_str().unwrap().to_string()
    };
    let clean = |out: &Output, what: &str| {
        let stderr = text(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{what}: exit {:?}\n{stderr}",
            out.status
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("overflow"),
            "{what}:\n{stderr}"
        );
    };
    let deep = write("deep.lisp", &nested("scalar", 20_000));
    let stderr = assert_fails(&lift(&["check", &deep]), "nested too deeply");
    assert!(stderr.contains("deep.lisp:1:"), "the message has a place:\n{stderr}");
    assert_succeeds(&lift(&["check", &write("d300.lisp", &nested("scalar", 300))]));

    for shape in ["scalar", "pipeline", "definitions", "types", "sizes"] {
        // The deepest program of this shape that the reader accepts.
        let mut k = 495;
        let mut last = None;
        loop {
            let p = write(&format!("{shape}{k}.lisp"), &nested(shape, k));
            let out = lift(&["check", &p]);
            if out.status.success() {
                last = Some(p);
                k += 1;
                continue;
            }
            assert_fails(&out, "nested too deeply");
            break;
        }
        let p = last.unwrap_or_else(|| panic!("{shape}: 495 levels are refused"));
        for emit in ["types", "views", "plan", "cl"] {
            clean(
                &lift(&["compile", &p, "--emit", emit]),
                &format!("{shape} {k}: compile {emit}"),
            );
        }
        clean(
            &lift(&["run", &p, "--data", data, "--backend", "interp", "--size", "N=2"]),
            &format!("{shape} {k}: run"),
        );
        clean(
            &lift(&["explore", &p, "--size", "N=2"]),
            &format!("{shape} {k}: explore"),
        );
    }
}

/// The variants measured in the tuning cache under `dir` (each run records every variant as
/// soon as it is measured).
fn recorded_variants(dir: &Path) -> usize {
    let Ok(text) = std::fs::read_to_string(dir.join("tuning.json")) else {
        return 0;
    };
    // A half-written cache file would not parse: it is written to a temporary file and renamed.
    let cache = parse_json(&text, "the tuning cache");
    cache
        .as_object()
        .expect("an object")
        .iter()
        .filter(|(k, _)| k.starts_with("measured|"))
        .map(|(_, v)| v.as_object().map_or(0, |m| m.len()))
        .sum()
}

/// A `lift tune` keeps each measurement in the tuning cache as it is made: a run of the cost
/// model's first variant, then a run of its first four, resumes from what the first recorded
/// and measures only the rest; and a run killed at any moment leaves a cache that still
/// parses and keeps what was recorded before the kill. Skipped without a device.
#[test]
fn an_interrupted_tune_resumes_from_the_cache() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("tune-resume");
    let _ = std::fs::remove_file(dir.join("tuning.json"));
    let args = |top: &'static str| {
        let mut args = vec![
            "tune",
            "examples/hl_sum.lisp",
            "--size",
            "N=1048576",
            "--top",
            top,
            "--repeats",
            "1",
        ];
        if let Some(d) = &device {
            args.extend(["--devices", d.as_str()]);
        }
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let run = |top: &'static str| {
        Command::new(env!("CARGO_BIN_EXE_lift"))
            .args(args(top))
            .current_dir(repo_root())
            .env("LIFT_CACHE_DIR", &dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the lift binary")
    };
    assert_succeeds(&run("1").wait_with_output().unwrap());
    let first = recorded_variants(&dir);
    assert!(first >= 1, "the first run records its measurements");
    let stdout = assert_succeeds(&run("4").wait_with_output().unwrap());
    let total = recorded_variants(&dir);
    assert!(total > first, "the second run measures the other variants:\n{stdout}");
    assert!(
        stdout.contains(&format!("resumed: {first} of ")),
        "the second run resumes the {first} recorded result(s):\n{stdout}"
    );
    // Killed once it has recorded something (or after it ended): whatever the moment, the
    // cache parses (it is written to a temporary file and renamed) and keeps every result.
    let _ = std::fs::remove_file(dir.join("tuning.json"));
    let mut child = run("4");
    while recorded_variants(&dir) == 0 && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let kept_before = recorded_variants(&dir);
    child.kill().unwrap();
    let _ = child.wait();
    assert!(recorded_variants(&dir) >= kept_before, "the kill lost recorded results");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A work-group chunk too large for local memory is refused before launch, naming the buffer,
/// its size and the device's limit (PoCL aborted the process at launch); `lift tune` skips
/// such variants and counts them. Skipped without a device.
#[test]
fn local_memory_beyond_the_device_is_refused_before_launch() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("local-limit");
    let prog = dir.join("chunk.lisp");
    std::fs::write(
        &prog,
        "(lift (N) ((array-type float N)) (lambda (xs) (join (mapWrg (lambda (chunk) \
         (toGlobal (mapLcl (lambda (x) (* x 2.0f)) (toLocal (mapLcl (lambda (x) x) chunk))))) \
         (split #4194304 xs)))))",
    )
    .unwrap();
    let prog = prog.to_str().unwrap();
    let mut bench = vec!["bench", prog, "--size", "N=4194304", "--repeats", "1"];
    let mut tune = vec![
        "tune",
        prog,
        "--size",
        "N=4194304",
        "--repeats",
        "1",
        "--check-steps",
        "0",
    ];
    if let Some(d) = &device {
        bench.extend(["--device", d.as_str()]);
        tune.extend(["--devices", d.as_str()]);
    }
    let stderr = assert_fails(&lift(&bench), "the local buffer `");
    assert!(
        stderr.contains("(4194304 x float)") && stderr.contains("16777216 bytes") && stderr.contains("device limit"),
        "{stderr}"
    );
    let out = lift_cached(&tune, &dir);
    let stdout = assert_succeeds(&out);
    let skipped = stdout.matches("[skipped: the local buffer `").count();
    assert!(skipped >= 1, "{stdout}");
    assert!(
        stdout.contains(&format!("skipped: {skipped} variant(s) could not run on this device")),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A variant that runs past the time limit stops `lift tune` with a clear message; what was
/// measured before stays in the cache and the next run resumes from it. Skipped without a
/// device.
#[test]
fn a_tune_past_its_time_limit_keeps_its_results() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("tune-limit");
    let _ = std::fs::remove_file(dir.join("tuning.json"));
    let tune = |top: &str, limit: &str| {
        let mut args = vec![
            "tune",
            "examples/hl_sum.lisp",
            "--size",
            "N=262144",
            "--top",
            top,
            "--repeats",
            "1",
        ];
        if let Some(d) = &device {
            args.extend(["--devices", d.as_str()]);
        }
        Command::new(env!("CARGO_BIN_EXE_lift"))
            .args(&args)
            .current_dir(repo_root())
            .env("LIFT_CACHE_DIR", &dir)
            .env("LIFT_TUNE_TIME_LIMIT", limit)
            .output()
            .expect("run the lift binary")
    };
    assert_succeeds(&tune("1", ""));
    let kept = recorded_variants(&dir);
    assert!(kept >= 1);
    // Every variant not yet measured now exceeds the limit.
    let stderr = assert_fails(&tune("4", "0.000001"), "did not finish");
    assert!(
        stderr.contains(&format!("the {kept} result(s) measured so far are in the tuning cache")),
        "{stderr}"
    );
    assert_eq!(recorded_variants(&dir), kept);
    let stdout = assert_succeeds(&tune("4", ""));
    assert!(stdout.contains(&format!("resumed: {kept} of")), "{stdout}");
    assert_fails(&tune("4", "soon"), "LIFT_TUNE_TIME_LIMIT=soon");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `(* (/ N 2) 2)` is the length of `join (split #2 xs)`: the program types, runs where 2
/// divides N, and where it does not fails with the split's message, also when a rewritten
/// variant without the split runs it (OpenCL skipped without a device).
#[test]
fn floor_and_exact_division_are_one_length() {
    let dir = scratch("division");
    let prog = dir.join("half.lisp");
    std::fs::write(
        &prog,
        "(lift (N) ((array-type float N) (array-type float (* (/ N 2) 2))) (lambda (xs ys) \
         (map (lambda (p) (+ (get #0 p) (get #1 p))) (zip (join (split #2 xs)) ys))))",
    )
    .unwrap();
    let even = dir.join("even.json");
    let odd = dir.join("odd.json");
    std::fs::write(&even, r#"{"xs": [1.0, 2.0, 3.0, 4.0], "ys": [1.0, 1.0, 1.0, 1.0]}"#).unwrap();
    std::fs::write(&odd, r#"{"xs": [1.0, 2.0, 3.0, 4.0, 5.0], "ys": [1.0, 1.0, 1.0, 1.0]}"#).unwrap();
    let (prog, even, odd) = (prog.to_str().unwrap(), even.to_str().unwrap(), odd.to_str().unwrap());
    let mut backends = vec![("interp", None)];
    if let Some(device) = crate::opencl::device() {
        backends.push(("opencl", device));
    }
    for (backend, device) in backends {
        let args = |data: &str| {
            let mut a = vec!["run", prog, "--data", data, "--backend", backend];
            if let Some(d) = &device {
                a.extend(["--device", d.as_str()]);
            }
            lift(&a)
        };
        assert_eq!(assert_succeeds(&args(even)).trim(), "[2.0,3.0,4.0,5.0]", "{backend}");
        assert_fails(&args(odd), "5 is not a multiple of 2");
    }
}

/// NaN and the infinities go in and come out as `NaN`, `Infinity`, `-Infinity` (not `null`),
/// through the interpreter and OpenCL (skipped without a device).
#[test]
fn nan_and_infinities_round_trip_through_json() {
    let dir = scratch("nan");
    let data = dir.join("special.json");
    std::fs::write(&data, r#"{"xs": [NaN, Infinity, -Infinity, 1.5]}"#).unwrap();
    let data = data.to_str().unwrap();
    let mut backends = vec![("interp", None)];
    if let Some(device) = crate::opencl::device() {
        backends.push(("opencl", device));
    }
    for (backend, device) in backends {
        let mut args = vec!["run", "examples/thesis_2_1.lisp", "--data", data, "--backend", backend];
        if let Some(d) = &device {
            args.extend(["--device", d.as_str()]);
        }
        let stdout = assert_succeeds(&lift(&args));
        assert_eq!(stdout.trim(), "[NaN,Infinity,-Infinity,3.0]", "{backend}");
    }
}

/// `lift tune --budget 5s` says how many configurations it tried and how it found the best,
/// checks the work-group sizes it tried against the interpreter, and `--plot` draws the sweep.
/// (How long it takes depends on the machine's load, so it is no test's business.) Skipped
/// without a device.
#[test]
fn a_budgeted_tune_reports_its_search_and_plots_its_sweep() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("tune-budget");
    let _ = std::fs::remove_file(dir.join("tuning.json"));
    let (plot, table) = (dir.join("sweep.svg"), dir.join("t.json"));
    let (plot_arg, table_arg) = (plot.display().to_string(), table.display().to_string());
    let mut args = vec![
        "tune",
        "examples/hl_scale.lisp",
        "--size",
        "N=65536",
        "--budget",
        "5s",
        "--top",
        "2",
        "--repeats",
        "2",
        "--plot",
        plot_arg.as_str(),
        "--out",
        table_arg.as_str(),
    ];
    if let Some(d) = &device {
        args.extend(["--devices", d.as_str()]);
    }
    let stdout = assert_succeeds(&lift_cached(&args, &dir));
    assert!(stdout.contains("configuration(s) tried in"), "{stdout}");
    assert!(
        stdout.contains("found at try") && stdout.contains("cost-model rank") | stdout.contains("as written"),
        "{stdout}"
    );
    let svg = std::fs::read_to_string(&plot).expect("the sweep's chart");
    assert!(svg.contains("<svg") && svg.contains("best: variant"), "{svg}");
    let rows = parse_json(&std::fs::read_to_string(&table).expect("the table"), "the table");
    let rows = rows.as_array().expect("an array of rows");
    let tuned_wg: Vec<_> = rows
        .iter()
        .filter(|r| r["work_group"].as_array().is_some_and(|w| !w.is_empty()))
        .collect();
    assert!(!tuned_wg.is_empty(), "the search tried work-group sizes: {rows:?}");
    // A configuration slower than a checked one is not interpreted (it cannot win); every
    // other one equals the interpreter.
    for r in tuned_wg {
        let deferred = r["note"]
            .as_str()
            .is_some_and(|n| n.starts_with("unchecked: not checked (slower)"));
        assert!(
            r["check"] == "ok" || deferred,
            "another work-group size computes the same: {r}"
        );
    }
    // A second search starts from every configuration the first one measured.
    let out = lift_cached(&args, &dir);
    let stdout = assert_succeeds(&out);
    assert!(stdout.contains("resumed: "), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--budget` and `--work-group` refuse what is not a size or a time.
#[test]
fn budget_and_work_group_flags_refuse_nonsense() {
    for (args, needle) in [
        (
            ["tune", "examples/hl_scale.lisp", "--budget", "soon"],
            "expected a positive time",
        ),
        (
            ["tune", "examples/hl_scale.lisp", "--budget", "0s"],
            "expected a positive time",
        ),
        (
            ["compile", "examples/hl_scale.lisp", "--work-group", "0"],
            "expected a work-group size",
        ),
        (
            ["compile", "examples/hl_scale.lisp", "--work-group", "8x"],
            "expected a work-group size",
        ),
    ] {
        let out = lift(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(needle), "{args:?}: {}", text(&out.stderr));
    }
}

/// The `mapGlb` work-group size is a compile option: it changes the launch plan (and the
/// kernel's declared work-group size); the tuning cache stores it with the tuned variant, and
/// `lift bench` compiles the variant with it and checks it against the interpreter. Skipped
/// without a device.
#[test]
fn the_tuned_work_group_size_changes_the_plan_and_is_reused() {
    let default = assert_succeeds(&lift(&["compile", "examples/hl_scale.lisp", "--emit", "plan"]));
    let wg64 = assert_succeeds(&lift(&[
        "compile",
        "examples/hl_scale.lisp",
        "--emit",
        "plan",
        "--work-group",
        "64",
    ]));
    assert!(default.contains("local [256]"), "{default}");
    assert!(wg64.contains("local [64]") && !wg64.contains("local [256]"), "{wg64}");
    let cl = assert_succeeds(&lift(&["compile", "examples/hl_scale.lisp", "--work-group", "64"]));
    assert!(cl.contains("reqd_work_group_size(64, 1, 1)"), "{cl}");

    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("tune-wg-reuse");
    let _ = std::fs::remove_file(dir.join("tuning.json"));
    let run = |args: &[&str]| lift_cached(args, &dir);
    let mut tune = vec![
        "tune",
        "examples/hl_scale.lisp",
        "--size",
        "N=4096",
        "--top",
        "1",
        "--repeats",
        "1",
    ];
    let mut bench = vec![
        "bench",
        "examples/hl_scale.lisp",
        "--size",
        "N=4096",
        "--repeats",
        "1",
        "--check-size",
        "N=4096",
        "--json",
    ];
    if let Some(d) = &device {
        tune.extend(["--devices", d.as_str()]);
        bench.extend(["--device", d.as_str()]);
    }
    assert_succeeds(&run(&tune));
    // The best entry stores its work-group size; set it to 64 as a search would.
    let path = dir.join("tuning.json");
    let mut cache = parse_json(&std::fs::read_to_string(&path).expect("the cache"), "the cache");
    let best = cache
        .as_object_mut()
        .expect("an object")
        .iter_mut()
        .find(|(_, v)| v.get("source").is_some())
        .map(|(_, v)| v)
        .expect("a best entry");
    assert!(best["work_group"].is_array(), "{best}");
    best["work_group"] = serde_json::json!([64]);
    std::fs::write(&path, serde_json::to_string(&cache).unwrap()).unwrap();
    let report = parse_json(&assert_succeeds(&run(&bench)), "the bench report");
    let variant = report["variant"].as_str().unwrap_or("");
    assert!(variant.contains("mapGlb work-group 64"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A malformed `--size`/`--check-size` value is a usage error (2), like any malformed flag; a
/// well-formed one that contradicts the data is an error of the input (1).
#[test]
fn malformed_size_values_are_usage_errors() {
    for args in [
        &["run", "examples/thesis_2_1.lisp", "--size", "N"][..],
        &["run", "examples/thesis_2_1.lisp", "--size", "N=abc"][..],
        &["explore", "examples/hl_sum.lisp", "--size", "N=99999999999999999999"][..],
        &["bench", "examples/hl_sum.lisp", "--check-size", "N"][..],
        &["tune", "examples/hl_sum.lisp", "--size", "=4"][..],
    ] {
        let out = lift(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(text(&out.stderr).contains("--size"), "{args:?}: {}", text(&out.stderr));
    }
    let out = lift(&[
        "run",
        "examples/hl_sum.lisp",
        "--data",
        "examples/hl_sum.json",
        "--size",
        "N=3",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

/// The work-group and local-memory limits are the device's, queried at run time: forced lower
/// (`LIFT_MAX_WORK_GROUP_SIZE`, `LIFT_LOCAL_MEM_BYTES`) they refuse a launch that needs more,
/// before it runs, with a clean error (exit 1, no note asking for a bug report); unforced the
/// same programs run. Skipped without a device.
#[test]
fn device_limits_below_a_variants_needs_are_clean_errors() {
    let Some(device) = crate::opencl::device() else { return };
    let cases = [
        (
            "examples/filter_glb.lisp",
            "examples/filter_glb.json",
            host_runner::MAX_WORK_GROUP_VAR,
            "32",
            "more work-items than the device maximum of 32",
        ),
        (
            "examples/matmul_tiled.lisp",
            "examples/matmul_tiled.json",
            host_runner::LOCAL_MEM_VAR,
            "16",
            "more than the device limit of 16 bytes",
        ),
    ];
    for (prog, data, var, limit, want) in cases {
        let mut args = vec!["run", prog, "--data", data];
        if let Some(d) = &device {
            args.extend(["--device", d.as_str()]);
        }
        let run = |forced: bool| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
            c.args(&args).current_dir(repo_root());
            if forced {
                c.env(var, limit);
            }
            c.output().expect("run the lift binary")
        };
        assert_succeeds(&run(false));
        let out = run(true);
        assert_eq!(out.status.code(), Some(1), "{prog} with {var}={limit}");
        let stderr = assert_fails(&out, want);
        assert!(!stderr.contains("bug"), "{stderr}");
    }
}

/// `lift run --devices D,D` compiles each device's program within that device's work-group
/// limit, as a run on one device does: under a limit of 64, `mapLcl` of 128 (run whole) and
/// `filterGlb` (split, one part per context) give the interpreter's result; both were
/// refused at launch. `--emit plan --devices` shows the plan within the smallest limit.
/// Skipped without a device.
#[test]
fn runs_over_several_devices_are_generated_within_their_limits() {
    if crate::opencl::device().is_none() {
        return;
    }
    let id = host_runner::devices().expect("listed above")[0].id.clone();
    let twice = format!("{id},{id}");
    let dir = scratch("devices-wg-limit");
    let progs = [
        (
            "(lift (N) ((array-type float N)) (lambda (xs) (join (mapWrg (lambda (c) \
             (toGlobal (mapLcl (lambda (x) (* x 2.0f)) c))) (split #128 xs)))))",
            (0..512).map(|i| format!("{i}.0")).collect::<Vec<_>>().join(", "),
        ),
        (
            "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (filterGlb (lambda (x) (< x 40.0f)) xs))))",
            (0..5000)
                .map(|i| format!("{}.0", (i * 37) % 101))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    for (i, (src, xs)) in progs.iter().enumerate() {
        let prog = dir.join(format!("p{i}.lisp"));
        let data = dir.join(format!("p{i}.json"));
        std::fs::write(&prog, src).unwrap();
        std::fs::write(&data, format!("{{\"xs\": [{xs}]}}")).unwrap();
        let (prog, data) = (prog.display().to_string(), data.display().to_string());
        let run = |extra: &[&str], limited: bool| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
            c.args(["run", prog.as_str(), "--data", data.as_str()])
                .args(extra)
                .current_dir(repo_root());
            if limited {
                c.env(host_runner::MAX_WORK_GROUP_VAR, "64");
            }
            c.output().expect("run the lift binary")
        };
        let reference = assert_succeeds(&run(&["--backend", "interp"], false));
        let split = assert_succeeds(&run(&["--devices", twice.as_str()], true));
        assert_equals_interpreter(&reference, &split, src);
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.args(["compile", &dir.join("p1.lisp").display().to_string()])
        .args(["--emit", "plan", "--devices", twice.as_str()])
        .env(host_runner::MAX_WORK_GROUP_VAR, "64")
        .current_dir(repo_root());
    let plan = assert_succeeds(&c.output().expect("run the lift binary"));
    assert!(plan.contains("local [64]"), "{plan}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The device's work-group limit is known before code generation (the queried
/// `CL_DEVICE_MAX_WORK_GROUP_SIZE`, lowered by `LIFT_MAX_WORK_GROUP_SIZE`): `mapLcl` of 128 in
/// a work-group, and two nested `mapLcl` of 72 (5,184 work-items), stride within a limit of 64
/// and give the interpreter's result, as without the limit; `mapGlb` kernels take groups of 64
/// instead of 256, and so does `filterGlb` (its tiles of 1,024 elements then, five of them here,
/// so the look-back runs). They were refused at launch. Skipped without a device.
#[test]
fn work_groups_are_generated_within_the_devices_limit() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = scratch("device-wg-limit");
    let progs = [
        (
            "(lift (N) ((array-type float N)) (lambda (xs) (join (mapWrg (lambda (c) \
             (toGlobal (mapLcl (lambda (x) (* x 2.0f)) c))) (split #128 xs)))))",
            (0..256).map(|i| format!("{i}.0")).collect::<Vec<_>>().join(", "),
        ),
        (
            "(lift (N) ((array-type (array-type float 72) N)) (lambda (xs) \
             (join (join (join (mapWrg1 (lambda (band) (mapWrg (lambda (tile) \
             (mapLcl1 (lambda (row) (mapLcl (lambda (x) (+ x 1.0f)) row)) tile)) band)) \
             (split #1 (split #72 xs))))))))",
            (0..144)
                .map(|r| {
                    format!(
                        "[{}]",
                        (0..72)
                            .map(|c| format!("{}.0", (r * 72 + c) % 97))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 3.0f)) xs))))",
            (0..1000).map(|i| format!("{i}.0")).collect::<Vec<_>>().join(", "),
        ),
        (
            "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (filterGlb (lambda (x) (< x 40.0f)) xs))))",
            (0..5000)
                .map(|i| format!("{}.0", (i * 37) % 101))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    for (i, (src, xs)) in progs.iter().enumerate() {
        let prog = dir.join(format!("p{i}.lisp"));
        let data = dir.join(format!("p{i}.json"));
        std::fs::write(&prog, src).unwrap();
        std::fs::write(&data, format!("{{\"xs\": [{xs}]}}")).unwrap();
        let (prog, data) = (prog.display().to_string(), data.display().to_string());
        let mut args = vec!["run", prog.as_str(), "--data", data.as_str()];
        if let Some(d) = &device {
            args.extend(["--device", d.as_str()]);
        }
        let run = |forced: bool| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
            c.args(&args).current_dir(repo_root());
            if forced {
                c.env(host_runner::MAX_WORK_GROUP_VAR, "64");
            }
            c.output().expect("run the lift binary")
        };
        let reference = assert_succeeds(
            &Command::new(env!("CARGO_BIN_EXE_lift"))
                .args(["run", prog.as_str(), "--data", data.as_str(), "--backend", "interp"])
                .current_dir(repo_root())
                .output()
                .expect("run the lift binary"),
        );
        assert_equals_interpreter(&reference, &assert_succeeds(&run(false)), src);
        assert_equals_interpreter(&reference, &assert_succeeds(&run(true)), src);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lift` with the OpenCL loader pointed at an empty vendor directory: a machine without any
/// OpenCL driver, as a newcomer with only Rust has.
fn lift_without_opencl(args: &[&str], name: &str) -> Output {
    let empty = scratch(name);
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .current_dir(repo_root())
        .env("OCL_ICD_VENDORS", &empty)
        // Both loaders also take explicit driver lists, which would bypass the empty directory.
        .env_remove("OCL_ICD_FILENAMES")
        .env_remove("OPENCL_VENDOR_PATH")
        .output()
        .expect("run the lift binary");
    let _ = std::fs::remove_dir_all(&empty);
    out
}

#[test]
fn run_without_an_opencl_platform_falls_back_to_the_interpreter_and_says_so() {
    let args = ["run", "examples/thesis_2_1.lisp", "--data", "examples/thesis_2_1.json"];
    let out = lift_without_opencl(&args, "no-platform-run");
    let stdout = assert_succeeds(&out);
    assert_eq!(stdout, "[2.0,4.0,6.0,8.0,10.0,12.0]\n");
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line on stderr:\n{stderr}");
    assert!(
        stderr.starts_with("lift: no OpenCL platform found (")
            && stderr.contains("running on the reference interpreter instead")
            && stderr.contains("apt-get install pocl-opencl-icd ocl-icd-libopencl1"),
        "{stderr}"
    );
}

#[test]
fn an_explicit_opencl_backend_without_a_platform_is_an_error() {
    let mut args = vec!["run", "examples/thesis_2_1.lisp", "--data", "examples/thesis_2_1.json"];
    args.extend(["--backend", "opencl"]);
    let out = lift_without_opencl(&args, "no-platform-explicit");
    let stderr = assert_fails(&out, "no OpenCL platform found");
    assert!(!stderr.contains("interpreter"), "{stderr}");
    for cmd in ["bench", "tune"] {
        let out = lift_without_opencl(&[cmd, "examples/thesis_2_1.lisp", "--size", "N=8"], "no-platform-cmd");
        assert_fails(&out, "no OpenCL platform found");
    }
}

#[test]
fn compile_size_builds_the_size_into_the_kernels() {
    let generic = assert_succeeds(&lift(&["compile", "examples/thesis_2_1.lisp", "--emit", "cl"]));
    let known = assert_succeeds(&lift(&[
        "compile",
        "examples/thesis_2_1.lisp",
        "--size",
        "N=6",
        "--emit",
        "cl",
    ]));
    assert!(
        generic.contains("int v_N"),
        "N is a kernel argument without --size:\n{generic}"
    );
    assert!(!known.contains("v_N"), "N=6 is built in with --size:\n{known}");
    assert!(known.contains("< 6"), "{known}");
    let alias = assert_succeeds(&lift(&[
        "compile",
        "examples/thesis_2_1.lisp",
        "--known-size",
        "N=6",
        "--emit",
        "cl",
    ]));
    assert_eq!(alias, known, "--known-size is another name of --size");
}

/// What LANGUAGE.md's command section names and the compiler does not do yet: each is one
/// "not supported yet" error with exit 1, never a usage error or a run in another mode.
#[test]
fn unimplemented_commands_and_options_are_refused_as_not_supported_yet() {
    let run = ["run", "examples/thesis_2_1.lisp", "--data", "examples/thesis_2_1.json"];
    // `--mpi` is refused by a build without the cargo feature `mpi` (tests/it/mpi.rs runs it).
    let without_mpi: Vec<(Vec<&str>, &str)> = vec![
        (
            [&run[..], &["--mpi"]].concat(),
            "`--mpi` is not supported yet in this build of lift",
        ),
        (
            vec!["bench", "examples/thesis_2_1.lisp", "--size", "N=8", "--mpi"],
            "`--mpi` is not supported yet in this build of lift",
        ),
    ];
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&run[..], &["--precision", "tf32", "--devices", "all"]].concat(),
            "`--precision tf32` with `--devices` or `--mpi` is not supported yet",
        ),
        (
            vec![
                "build",
                "examples/host_filter_loop.lisp",
                "-o",
                "unused-dir",
                "--size",
                "N=6",
            ],
            "a filter's result in a program with host sections: not supported yet in `lift build`",
        ),
        (
            vec![
                "build",
                "examples/filter_seq_rows.lisp",
                "-o",
                "unused-dir",
                "--size",
                "N=40",
            ],
            "a result that is an array of filter results: not supported yet in `lift build`",
        ),
    ];
    if !cfg!(feature = "mpi") {
        cases.extend(without_mpi);
    }
    for (args, message) in cases {
        let stderr = assert_fails(&lift(&args), message);
        assert_eq!(
            stderr.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{args:?}:\n{stderr}"
        );
    }
    assert!(
        !repo_root().join("unused-dir").exists(),
        "a refused build writes nothing"
    );
    let f32 = assert_succeeds(&lift(
        &[&run[..], &["--precision", "f32", "--backend", "interp"]].concat(),
    ));
    assert_eq!(f32, "[2.0,4.0,6.0,8.0,10.0,12.0]\n");
}

/// `--precision tf32` on a device without TF32 tensor cores (PoCL, any device but an NVIDIA
/// GPU of compute capability 8.0 or later) is one error naming the device, from every command
/// that takes it; the interpreter (f32 products, which TF32 allows) runs it.
#[test]
fn tf32_is_refused_naming_a_device_without_tensor_cores() {
    let run = ["run", "examples/thesis_2_1.lisp", "--data", "examples/thesis_2_1.json"];
    let interp = assert_succeeds(&lift(
        &[&run[..], &["--precision", "tf32", "--backend", "interp"]].concat(),
    ));
    assert_eq!(interp, "[2.0,4.0,6.0,8.0,10.0,12.0]\n");
    let Some(device) = crate::opencl::device() else { return };
    let info = host_runner::device_info(device.as_deref()).expect("the test device");
    if info.tf32_tensor_cores() {
        return;
    }
    let on = ["--device", info.id.as_str()];
    let tf32 = ["--precision", "tf32"];
    let mm = [
        "bench/cgo17/mm.lisp",
        "--size",
        "M=32",
        "--size",
        "K=32",
        "--size",
        "N=32",
    ];
    let bmm = [
        "bench/indep/bmm.lisp",
        "--size",
        "B=2",
        "--size",
        "M=128",
        "--size",
        "K=32",
        "--size",
        "N=128",
    ];
    let cases: Vec<Vec<&str>> = vec![
        [&run[..], &on[..], &tf32[..]].concat(),
        [&["bench"][..], &mm[..], &on[..], &tf32[..], &["--check-size", "M=16"]].concat(),
        [&["bench"][..], &bmm[..], &on[..], &tf32[..]].concat(),
        [&["tune"][..], &mm[..], &["--devices", info.id.as_str()], &tf32[..]].concat(),
        [&["build"][..], &mm[..], &on[..], &tf32[..], &["-o", "unused-tf32-dir"]].concat(),
    ];
    let named = format!("device {} `{}`", info.id, info.name);
    for args in cases {
        let stderr = assert_fails(&lift(&args), "`--precision tf32` needs TF32 tensor cores");
        assert!(stderr.contains(&named), "{args:?} names the device:\n{stderr}");
        assert!(
            stderr.contains("--precision f32"),
            "{args:?} says what to use:\n{stderr}"
        );
        assert_eq!(
            stderr.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{args:?}:\n{stderr}"
        );
    }
    assert!(
        !repo_root().join("unused-tf32-dir").exists(),
        "a refused build writes nothing"
    );
}
