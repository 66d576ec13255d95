//! `lift build`: the C library of a program, used from C by `examples/c/demo.c`. The demo's
//! printed results equal `lift run --backend interp`, including a call whose input is the
//! previous call's result (left on the device); its wrong calls fail with their message; the
//! header compiles as C++ too. Needs `cc`, `c++` and an OpenCL device (PoCL in CI).

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

    assert_eq!(
        line(&out, "wrong length"),
        "argument `xs` has shape [4], but the library was built for [8] (N=8)"
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
