//! `lift build`: the C library of a program, used from C by `examples/c/demo.c` and
//! `examples/c/robustness.c`. The demo's printed results equal `lift run --backend interp`,
//! including a call whose input is the previous call's result (left on the device); wrong calls
//! fail with their message; 10,000 calls leave memory and the count of live arrays where they
//! were; threads share a context or use their own; sizes the library was not built for run its
//! generic kernels. The header compiles as C++ too. Needs `cc`, `c++` and an OpenCL device
//! (PoCL in CI).

use crate::{json_close, parse_json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> String {
    let out: Output = cmd.current_dir(repo_root()).output().expect("start the command");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lift(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lift"));
    c.args(args);
    c
}

/// The interpreter's result of `program` on the JSON `data`.
fn interp(program: &str, data: &str, dir: &Path) -> serde_json::Value {
    let file = dir.join("data.json");
    std::fs::write(&file, data).expect("write the data");
    let out = run(lift(&["run", program, "--backend", "interp", "--data"]).arg(&file));
    parse_json(&out, "the interpreter's result")
}

/// The line `label: …` of the demo's output, after the label.
fn line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{label}: ")))
        .unwrap_or_else(|| panic!("no `{label}:` line in\n{out}"))
}

#[test]
fn the_c_demo_equals_the_interpreter_and_reports_wrong_calls() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-c-library-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    let built = run(&mut lift(&["build", "examples/saxpy.lisp", "-o", d, "--size", "N=8"]));
    assert!(built.contains("libsaxpy.so"), "{built}");
    run(&mut lift(&[
        "build",
        "examples/hl_matvec.lisp",
        "-o",
        d,
        "--size",
        "M=4",
        "--size",
        "N=4",
    ]));
    for f in ["saxpy.h", "libsaxpy.so", "hl_matvec.h", "libhl_matvec.so"] {
        assert!(dir.join(f).is_file(), "{f} missing from {}", dir.display());
    }
    let exe = dir.join("demo");
    run(Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "examples/c/demo.c", "-I", d, "-L", d])
        .args(["-lsaxpy", "-lhl_matvec", &format!("-Wl,-rpath,{d}"), "-o"])
        .arg(&exe));
    // The demo is also C++: compiled as C++ it checks that the headers are.
    run(Command::new("c++").args([
        "-x",
        "c++",
        "-Wall",
        "-Werror",
        "-fsyntax-only",
        "examples/c/demo.c",
        "-I",
        d,
    ]));
    let mut demo = Command::new(&exe);
    demo.args(device.as_deref());
    let out = run(&mut demo);

    let saxpy = parse_json(line(&out, "saxpy"), "the demo's saxpy");
    let data = std::fs::read_to_string(repo_root().join("examples/saxpy.json")).expect("read saxpy.json");
    let want = interp("examples/saxpy.lisp", &data, &dir);
    assert!(json_close(&want, &saxpy), "saxpy: interpreter {want}, C {saxpy}");
    // The chained call: the first result as `ys`.
    let chained = parse_json(line(&out, "saxpy chained"), "the demo's chained saxpy");
    let mut again: serde_json::Value = parse_json(&data, "saxpy.json");
    again["ys"] = want;
    let want = interp("examples/saxpy.lisp", &again.to_string(), &dir);
    assert!(json_close(&want, &chained), "chained: interpreter {want}, C {chained}");
    let mv = parse_json(line(&out, "matvec"), "the demo's matvec");
    let data = std::fs::read_to_string(repo_root().join("examples/hl_matvec.json")).expect("read hl_matvec.json");
    let want = interp("examples/hl_matvec.lisp", &data, &dir);
    assert!(json_close(&want, &mv), "matvec: interpreter {want}, C {mv}");

    let chosen = line(&out, "matvec compiled as");
    assert!(
        chosen.starts_with("the cost model's best variant: ") || chosen.starts_with("the variant `lift tune` found"),
        "{chosen}"
    );
    // Arrays of another length run the generic kernels, which find `ys` does not fit `xs`.
    assert_eq!(
        line(&out, "wrong length"),
        "argument `ys` has shape [8], but the sizes the arguments give (N=4) make it [4]"
    );
    assert_eq!(
        line(&out, "wrong rank"),
        "argument `mat` is an array of another element type or rank"
    );
    assert_eq!(
        line(&out, "free with arrays"),
        "the context still has 4 arrays: free them first"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_library_needs_every_size() {
    let out = lift(&["build", "examples/hl_matvec.lisp", "-o", "unused-dir", "--size", "M=4"])
        .current_dir(repo_root())
        .output()
        .expect("run lift");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("give --size N=…"), "{stderr}");
    assert!(
        !repo_root().join("unused-dir").exists(),
        "a refused build writes nothing"
    );
}

/// Checks of `examples/at.lisp`'s library, as a C program: an int array parameter, a failed `at`
/// bounds check reported with `lift run`'s message (and the context usable after it),
/// four threads calling one context at once, each getting its own right result, an array
/// freed twice, a call on a freed context and a context on an unknown device, refused with their
/// message.
const AT_CHECKS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include "at.h"
static at_ctx* ctx;
static at_f32_1d* xs;
static void* worker(void* arg) {
    intptr_t failures = 0;
    int32_t idx[6];
    for (int k = 0; k < 6; k++) idx[k] = (k + (int)(intptr_t)arg) % 5;
    for (int rep = 0; rep < 50; rep++) {
        at_i32_1d* i = at_new_i32_1d(ctx, idx, 6);
        at_f32_1d* r = NULL;
        float out[6];
        if (!i || at_run(ctx, &r, xs, i) || at_values_f32_1d(ctx, r, out)) return (void*)(failures + 1000);
        for (int k = 0; k < 6; k++) if (out[k] != 10.0f + (float)idx[k]) failures++;
        at_free_f32_1d(ctx, r);
        at_free_i32_1d(ctx, i);
    }
    return (void*)failures;
}
int main(int argc, char** argv) {
    ctx = at_ctx_new(argc > 1 ? argv[1] : NULL);
    if (!ctx || at_error(ctx)[0]) { printf("context: %s\n", ctx ? at_error(ctx) : "NULL"); return 1; }
    const float x[5] = {10, 11, 12, 13, 14};
    const int32_t bad[6] = {4, 7, 2, 2, 1, 3};
    xs = at_new_f32_1d(ctx, x, 5);
    at_i32_1d* b = at_new_i32_1d(ctx, bad, 6);
    at_f32_1d* r = NULL;
    if (at_run(ctx, &r, xs, b) == 0 || r) { printf("out of range: no error\n"); return 1; }
    printf("out of range: %s\n", at_error(ctx));
    pthread_t t[4];
    for (int k = 0; k < 4; k++) pthread_create(&t[k], NULL, worker, (void*)(intptr_t)k);
    intptr_t failures = 0;
    for (int k = 0; k < 4; k++) {
        void* f = NULL;
        pthread_join(t[k], &f);
        failures += (intptr_t)f;
    }
    printf("thread failures: %d\n", (int)failures);
    at_free_i32_1d(ctx, b);
    if (at_free_i32_1d(ctx, b) == 0) { printf("an array was freed twice\n"); return 1; }
    printf("freed twice: %s\n", at_error(ctx));
    at_free_f32_1d(ctx, xs);
    printf("freed: %d\n", at_ctx_free(ctx));
    if (at_run(ctx, &r, xs, b) == 0) { printf("a freed context ran\n"); return 1; }
    printf("closed: %s\n", at_error(ctx));
    at_ctx* nowhere = at_ctx_new("99:99");
    if (!nowhere || at_run(nowhere, &r, xs, b) == 0) { printf("a context without a device ran\n"); return 1; }
    printf("no device: %s\n", at_error(nowhere));
    return at_ctx_free(nowhere);
}
"#;

#[test]
fn a_failed_device_check_is_an_error_and_threads_share_a_context() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-c-library-at-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    run(&mut lift(&[
        "build",
        "examples/at.lisp",
        "-o",
        d,
        "--size",
        "N=5",
        "--size",
        "M=6",
    ]));
    let src = dir.join("checks.c");
    std::fs::write(&src, AT_CHECKS).expect("write the C program");
    let exe = dir.join("checks");
    run(Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-I", d, "-L", d])
        .arg(&src)
        .args(["-lat", "-lpthread", &format!("-Wl,-rpath,{d}"), "-o"])
        .arg(&exe));
    let mut checks = Command::new(&exe);
    checks.args(device.as_deref());
    let out = run(&mut checks);
    assert_eq!(
        line(&out, "out of range"),
        "index out of range in `at` (detected on the device)"
    );
    assert_eq!(line(&out, "thread failures"), "0", "{out}");
    assert_eq!(line(&out, "freed"), "0", "{out}");
    assert_eq!(
        line(&out, "freed twice"),
        "argument `a` is not a live array of this context (freed, or another context's)"
    );
    assert_eq!(
        line(&out, "no device"),
        "no OpenCL device with id or name `99:99` (`lift devices` lists them)"
    );
    assert_eq!(
        line(&out, "closed"),
        "the context was freed (or is not one of this library)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A low-level program with local memory sized at launch and 2-D work-groups, whose parameter
/// `b` would clash with a name of the generated code if that code did not keep to `lr_` names.
const MATMUL: &str = r#"
#include <stdio.h>
#include "matmul_tiled.h"
int main(int argc, char** argv) {
    matmul_tiled_ctx* ctx = matmul_tiled_ctx_new(argc > 1 ? argv[1] : NULL);
    const float a[24] = {-2, 1, 3, 3, 3, -3, -1, -3, 0, 3, 0, 0, 2, 0, 3, -2, -3, 0, -3, 3, 0, 0, 1, 3};
    const float b[24] = {3, -3, 2, 0, -1, 2, 3, -2, 1, -3, -1, -3, -3, -3, 2, 1, -3, 0, 2, -2, 0, 2, -3, 1};
    matmul_tiled_f32_2d* A = matmul_tiled_new_f32_2d(ctx, a, 4, 6);
    matmul_tiled_f32_2d* B = matmul_tiled_new_f32_2d(ctx, b, 6, 4);
    matmul_tiled_f32_2d* C = NULL;
    float c[16];
    if (matmul_tiled_run(ctx, &C, A, B) || matmul_tiled_values_f32_2d(ctx, C, c)) {
        printf("error: %s\n", matmul_tiled_error(ctx));
        return 1;
    }
    const int64_t* shape = matmul_tiled_shape_f32_2d(ctx, C);
    printf("shape: [%lld, %lld]\nresult: [", (long long)shape[0], (long long)shape[1]);
    for (int i = 0; i < 4; i++) {
        printf(i ? ", [" : "[");
        for (int j = 0; j < 4; j++) printf(j ? ", %.9g" : "%.9g", c[4 * i + j]);
        printf("]");
    }
    printf("]\n");
    return 0;
}
"#;

#[test]
fn a_library_with_local_memory_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-c-library-mm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    let sizes = ["--size", "M=4", "--size", "K=6", "--size", "N=4"];
    run(&mut lift(
        &[&["build", "examples/matmul_tiled.lisp", "-o", d][..], &sizes[..]].concat(),
    ));
    let src = dir.join("mm.c");
    std::fs::write(&src, MATMUL).expect("write the C program");
    let exe = dir.join("mm");
    run(Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-I", d, "-L", d])
        .arg(&src)
        .args(["-lmatmul_tiled", &format!("-Wl,-rpath,{d}"), "-o"])
        .arg(&exe));
    let mut mm = Command::new(&exe);
    mm.args(device.as_deref());
    let out = run(&mut mm);
    assert_eq!(line(&out, "shape"), "[4, 4]");
    let got = parse_json(line(&out, "result"), "the C result");
    let data = std::fs::read_to_string(repo_root().join("examples/matmul_tiled.json")).expect("read the data");
    let want = interp("examples/matmul_tiled.lisp", &data, &dir);
    assert!(json_close(&want, &got), "interpreter {want}, C {got}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ten_thousand_calls_leak_nothing_and_every_misuse_is_a_clean_error() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-c-library-robust-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    run(&mut lift(&[
        "build",
        "examples/saxpy.lisp",
        "-o",
        d,
        "--size",
        "N=1024",
    ]));
    // Without sizes: a library of generic kernels only.
    run(&mut lift(&["build", "examples/hl_matvec.lisp", "-o", d]));
    let exe = dir.join("robustness");
    run(Command::new("cc")
        .args([
            "-std=c99",
            "-Wall",
            "-Werror",
            "examples/c/robustness.c",
            "-I",
            d,
            "-L",
            d,
        ])
        .args([
            "-lsaxpy",
            "-lhl_matvec",
            "-lpthread",
            "-lm",
            &format!("-Wl,-rpath,{d}"),
            "-o",
        ])
        .arg(&exe));
    let mut prog = Command::new(&exe);
    prog.arg(device.as_deref().unwrap_or("")).arg("10000");
    let out = run(&mut prog);
    let num = |label: &str| -> i64 {
        line(&out, label)
            .parse()
            .unwrap_or_else(|_| panic!("`{label}` is not a number in\n{out}"))
    };
    assert_eq!(num("failed calls"), 0, "{out}");
    // A leaked 4 KiB result per call would be 36 MB over the last 9,000 calls.
    assert!(num("rss growth KiB") < 1024, "{out}");
    assert_eq!(num("live arrays"), 2, "{out}");
    assert_eq!(num("bytes moved by 100 chained runs"), 0, "{out}");
    assert_eq!(num("bytes moved reading a result"), 4096, "{out}");
    for zero in [
        "built size wrong elements",
        "other size wrong",
        "empty arrays wrong",
        "after errors wrong",
        "shared context thread failures",
        "own context thread failures",
        "call wrong elements",
        "live arrays at end",
        "context free",
        "other context free",
        "matvec wrong",
    ] {
        assert_eq!(num(zero), 0, "{zero}:\n{out}");
    }
    assert!(line(&out, "built size used").ends_with("built for N=1024"), "{out}");
    assert!(
        line(&out, "other size used").ends_with("generic kernels (sizes as arguments)"),
        "{out}"
    );
    for (label, message) in [
        (
            "mismatched lengths",
            "argument `ys` has shape [8], but the sizes the arguments give (N=1024) make it [1024]",
        ),
        ("null out", "`out` is NULL"),
        ("null array", "argument `xs` is NULL"),
        ("negative shape", "dimension 0 of the new array is negative (-3)"),
        ("null data", "the new array's data is NULL"),
        (
            "freed array",
            "argument `ys` is not a live array of this context (freed, or another context's)",
        ),
        (
            "other context's array",
            "argument `ys` is not a live array of this context (freed, or another context's)",
        ),
        ("freed context", "the context was freed (or is not one of this library)"),
        (
            "unknown kind",
            "this library has no arrays of f64 of rank 1 (see `<prog>_signature`)",
        ),
    ] {
        assert_eq!(line(&out, label), message, "{out}");
    }
    for rc in [
        "mismatched lengths rc",
        "null out rc",
        "null array rc",
        "freed array rc",
        "other context's array rc",
        "other context's values rc",
        "freed context rc",
        "freed context twice",
    ] {
        assert_eq!(num(rc), 1, "{rc}:\n{out}");
    }
    assert_eq!(line(&out, "result after error"), "NULL");
    assert_eq!(line(&out, "signature"), "alpha:f32:0 xs:f32:1 ys:f32:1 -> f32:1");
    assert_eq!(line(&out, "call"), "rc 0 rank 1 length 1024");
    // hl_matvec's cost-model variant splits rows by 128: 256 columns run it, 5 columns and 1
    // run the program as written.
    assert!(
        line(&out, "matvec 4x256 used").starts_with("the cost model's best variant"),
        "{out}"
    );
    for small in ["matvec 3x5 used", "matvec 1x1 used"] {
        assert_eq!(
            line(&out, small),
            "the program as written, generic kernels (sizes as arguments)",
            "{out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A library of a whole-array scan (`scanGlb`: one launch whose work-groups order themselves
/// through zeroed status words), built with a relative `-o` from the repository's folder and
/// called twice on one context: both calls equal the interpreter, so the status words start at
/// zero on every call.
#[test]
fn a_scan_library_built_into_a_relative_folder_equals_the_interpreter_on_every_call() {
    let Some(device) = crate::opencl::device() else { return };
    let rel = format!("target/lift-it-scan-library-{}", std::process::id());
    let dir = repo_root().join(&rel);
    let _ = std::fs::remove_dir_all(&dir);
    let n = 20000;
    let mut args = vec!["build", "examples/scan_float.lisp", "-o", rel.as_str()];
    let size = format!("N={n}");
    args.extend(["--size", size.as_str()]);
    if let Some(d) = &device {
        args.extend(["--device", d.as_str()]);
    }
    run(&mut lift(&args));
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919 % 13) as f32 - 6.0) * 0.25).collect();
    let main = format!(
        r#"#include <stdio.h>
#include "scan_float.h"
int main(void) {{
    static float xs[{n}], out[{n}];
    for (int i = 0; i < {n}; i++) xs[i] = (float)((i * 7919 % 13) - 6) * 0.25f;
    scan_float_ctx* ctx = scan_float_ctx_new({dev});
    if (!ctx || scan_float_error(ctx)[0]) return 2;
    scan_float_f32_1d* a = scan_float_new_f32_1d(ctx, xs, {n});
    for (int call = 0; call < 2; call++) {{
        scan_float_f32_1d* r = NULL;
        if (!a || scan_float_run(ctx, &r, a) || scan_float_values_f32_1d(ctx, r, out)) {{
            fprintf(stderr, "%s\n", scan_float_error(ctx));
            return 1;
        }}
        printf("[");
        for (int i = 0; i < {n}; i++) printf(i ? ",%.9g" : "%.9g", out[i]);
        printf("]\n");
        scan_float_free_f32_1d(ctx, r);
    }}
    return 0;
}}
"#,
        dev = device.as_deref().map_or("NULL".to_string(), |d| format!("\"{d}\"")),
    );
    std::fs::write(dir.join("main.c"), main).expect("write main.c");
    let d = dir.to_str().expect("a UTF-8 folder");
    run(Command::new("cc")
        .args(["-std=c99", &format!("{d}/main.c"), "-I", d, "-L", d, "-lscan_float"])
        .args([&format!("-Wl,-rpath,{d}"), "-o", &format!("{d}/main")]));
    let out = String::from_utf8_lossy(
        &Command::new(dir.join("main"))
            .output()
            .expect("run the scan program")
            .stdout,
    )
    .into_owned();
    let data = serde_json::json!({ "xs": xs }).to_string();
    let want = interp("examples/scan_float.lisp", &data, &dir);
    let calls: Vec<&str> = out.lines().collect();
    assert_eq!(calls.len(), 2, "{out}");
    for (i, call) in calls.iter().enumerate() {
        let got = parse_json(call, "the library's result");
        assert!(
            json_close(&want, &got),
            "call {i}: the library's scan differs from the interpreter"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_programs_sharing_a_device_context_chain_results_without_copies() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = std::env::temp_dir().join(format!("lift-it-c-library-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().expect("a UTF-8 temporary folder");
    run(&mut lift(&["build", "examples/saxpy.lisp", "-o", d]));
    run(&mut lift(&["build", "examples/hl_matvec.lisp", "-o", d]));
    let exe = dir.join("shared");
    run(Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "examples/c/shared.c", "-I", d, "-L", d])
        .args(["-lsaxpy", "-lhl_matvec", &format!("-Wl,-rpath,{d}"), "-o"])
        .arg(&exe));
    let mut shared = Command::new(&exe);
    shared.args(device.as_deref());
    let out = run(&mut shared);
    // Three runs, each on the previous one's result: no byte crosses to or from the device.
    assert_eq!(line(&out, "moved by the chain"), "0");
    assert_eq!(line(&out, "same counts"), "1");
    let xs = serde_json::json!([1.0, 2.0, 3.0, 4.0]);
    let saxpy = |alpha: f64, ys: &serde_json::Value| {
        let data = serde_json::json!({ "alpha": alpha, "xs": xs, "ys": ys }).to_string();
        interp("examples/saxpy.lisp", &data, &dir)
    };
    let v = saxpy(2.0, &serde_json::json!([0.5, -0.5, 1.0, -1.0]));
    let got = parse_json(line(&out, "saxpy"), "saxpy");
    assert!(json_close(&v, &got), "saxpy: interpreter {v}, C {got}");
    let mat = serde_json::json!([[1, 2, 3, 4], [1, 0, 0, 0], [0, -1, 0, -0.5], [4, 3, 2, 1]]);
    let mv = interp(
        "examples/hl_matvec.lisp",
        &serde_json::json!({ "mat": mat, "v": v }).to_string(),
        &dir,
    );
    for label in ["matvec", "matvec read by saxpy"] {
        let got = parse_json(line(&out, label), label);
        assert!(json_close(&mv, &got), "{label}: interpreter {mv}, C {got}");
    }
    let again = saxpy(0.5, &mv);
    let got = parse_json(line(&out, "saxpy again"), "saxpy again");
    assert!(json_close(&again, &got), "saxpy again: interpreter {again}, C {got}");
    assert_eq!(
        line(&out, "another context"),
        "argument `ys` is not a live array of this context (freed, or another context's)"
    );
    assert_eq!(
        line(&out, "wrong rank"),
        "argument `mat` is an array of another element type or rank"
    );
    assert_eq!(line(&out, "share NULL"), "the context to share is NULL");
    assert_eq!(
        line(&out, "last free with arrays"),
        "the context still has 6 arrays: free them first"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
