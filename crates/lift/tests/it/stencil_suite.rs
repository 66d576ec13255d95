//! The stencil suite (`bench/stencil/`, issue 29): the Lift CGO'18 stencils, Rodinia's hotspot,
//! hotspot3D and SRAD, SHOC's Stencil2D and the separable convolution, written as high-level
//! programs. Each one, at its small test size, gives its `expect:` line (computed with numpy by
//! `bench/stencil/gen.py`) on the interpreter, and equals the interpreter on OpenCL (the
//! rewriter's best variant, as `lift run` picks it). `suite.tsv` lists every program with the
//! large sizes of its `;; size:` line.
//!
//! `lift run` on OpenCL runs in a child process with its own empty tuning cache, as in
//! `cgo17.rs` (rewrite exploration in this process would change what other tests' explorations
//! find).

use crate::cgo17::{lift_cli, Scratch};
use crate::{check_all, interp_options, json_close, load_dir, mentions, parse_json, Example};
use std::path::{Path, PathBuf};

/// Programs that do not run on OpenCL today, or give a result other than the interpreter's,
/// because of a compiler defect, each with a part of the message it gives. The test fails when a
/// listed program starts passing (take it off the list then), so the list only shrinks.
const KNOWN_OPENCL_FAILURES: &[(&str, &str)] = &[];

/// Every file of the suite: the test fails if one goes missing or an unlisted one appears, so
/// that the README's table, `suite.tsv` and this list stay the suite.
const SUITE: &[&str] = &[
    "convolution_separable.lisp",
    "gaussian.lisp",
    "grad2d.lisp",
    "heat3d.lisp",
    "hotspot.lisp",
    "hotspot3d.lisp",
    "jacobi2d_5pt.lisp",
    "jacobi2d_9pt.lisp",
    "jacobi3d_13pt.lisp",
    "jacobi3d_19pt.lisp",
    "jacobi3d_27pt.lisp",
    "jacobi3d_7pt.lisp",
    "poisson3d.lisp",
    "srad1.lisp",
    "srad2.lisp",
    "stencil2d_shoc.lisp",
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/stencil")
}

fn suite() -> Vec<Example> {
    load_dir(&suite_dir(), "")
}

fn data_of(ex: &Example) -> Result<String, String> {
    ex.data_path().ok_or_else(|| "no `;; data:` line".to_string())
}

/// The value of a program's `;; key:` header line.
fn header_line<'a>(ex: &'a Example, key: &str) -> Option<&'a str> {
    ex.src.lines().find_map(|l| {
        let (k, v) = l.strip_prefix(";;")?.split_once(':')?;
        if k.trim() == key {
            Some(v.trim())
        } else {
            None
        }
    })
}

fn interpreter(ex: &Example, data: &str) -> Result<serde_json::Value, String> {
    let res = lift::run_files(&ex.src, &[data.to_string()], &[], &interp_options())
        .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
    Ok(parse_json(&res.json, "the interpreter's result"))
}

/// The rows of `suite.tsv` (comments left out), each split at its tabs.
fn suite_rows() -> Vec<Vec<String>> {
    let tsv = std::fs::read_to_string(suite_dir().join("suite.tsv")).expect("bench/stencil/suite.tsv");
    tsv.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn the_suite_is_complete_and_documented() {
    let programs = suite();
    let names: Vec<&str> = programs.iter().map(|ex| ex.name.as_str()).collect();
    assert_eq!(
        names, SUITE,
        "bench/stencil/*.lisp is not the suite listed in stencil_suite.rs"
    );
    let readme = std::fs::read_to_string(suite_dir().join("README.md")).expect("bench/stencil/README.md");
    for name in SUITE {
        assert!(
            readme.contains(&format!("`{name}`")),
            "README.md's table does not list `{name}`"
        );
    }
    for (name, _) in KNOWN_OPENCL_FAILURES {
        assert!(SUITE.contains(name), "the known failure {name} is not in the suite");
    }
    let rows = suite_rows();
    for row in &rows {
        assert_eq!(row.len(), 6, "suite.tsv: not six tab-separated columns: {row:?}");
    }
    for ex in &programs {
        let file = format!("bench/stencil/{}", ex.name);
        let row = rows
            .iter()
            .find(|r| r[3] == file)
            .unwrap_or_else(|| panic!("suite.tsv has no row for {file}"));
        let size = header_line(ex, "size").unwrap_or_else(|| panic!("{}: no `;; size:` line", ex.name));
        assert_eq!(
            row[4], size,
            "{}: suite.tsv's large sizes differ from its `;; size:` line",
            ex.name
        );
        assert!(!row[5].is_empty(), "{}: suite.tsv gives no medium sizes", ex.name);
    }
    assert_eq!(
        rows.len(),
        SUITE.len(),
        "suite.tsv has rows for files that are not in the suite"
    );
}

#[test]
fn interpreter_gives_the_expected_results() {
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let expect = ex.header.expect.as_ref().ok_or("no `;; expect:` line")?;
            let want = parse_json(expect, "the expect: line");
            let got = interpreter(ex, &data_of(ex)?)?;
            if !json_close(&want, &got) {
                return Err(format!("expected {want}\n      got {got}"));
            }
            Ok(())
        },
    );
}

#[test]
fn opencl_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let scratch = Scratch::new("small");
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let data = data_of(ex)?;
            let want = interpreter(ex, &data)?;
            let program = ex.path.display().to_string();
            let mut args = vec!["run", program.as_str(), "--data", data.as_str()];
            if let Some(d) = &device {
                args.extend(["--device", d.as_str()]);
            }
            let outcome = lift_cli(&args, &scratch)
                .map_err(|e| format!("OpenCL: {e}"))
                .and_then(|out| {
                    let got = parse_json(&out, "the OpenCL result");
                    if json_close(&want, &got) {
                        Ok(())
                    } else {
                        Err(format!("interpreter {want}\n     OpenCL {got}"))
                    }
                });
            let known = KNOWN_OPENCL_FAILURES
                .iter()
                .find(|(n, _)| *n == ex.name)
                .map(|(_, m)| *m);
            match (outcome, known) {
                (Ok(()), None) => Ok(()),
                (Err(e), None) => Err(e),
                (Ok(()), Some(_)) => Err("passes on OpenCL now: take it off KNOWN_OPENCL_FAILURES".into()),
                (Err(e), Some(why)) if mentions(&e, why) => Ok(()),
                (Err(e), Some(why)) => Err(format!(
                    "fails differently than KNOWN_OPENCL_FAILURES says (`{why}`):\n{e}"
                )),
            }
        },
    );
}
