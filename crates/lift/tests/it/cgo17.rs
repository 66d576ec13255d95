//! The CGO'17 benchmark suite (`bench/cgo17/`): eleven benchmarks written as high-level programs.
//! Each one, at its small test size, gives its `expect:` line on the interpreter, equals the
//! interpreter on OpenCL (the rewriter's best variant, as `lift run` picks it), and has its typed
//! program snapshotted (`types@cgo17__<file>.snap`).

use crate::{check_all, interp_options, json_close, load_dir, mentions, parse_json, Example};
use std::path::{Path, PathBuf};

/// Programs that do not run on OpenCL today because of a compiler defect, each with a part of
/// the error it gives. The test fails when a listed program starts running (take it off the
/// list then), so the list only shrinks.
const KNOWN_OPENCL_FAILURES: &[(&str, &str)] = &[
    // The back end cannot store a tuple with a vector component; n-body's per-body result is
    // (new position, new velocity), two float4.
    ("nbody.lisp", "tuples containing float4 are not supported"),
];

/// Every file of the suite: the test fails if one goes missing or an unlisted one appears, so
/// that the README's table and this list stay the suite.
const SUITE: &[&str] = &[
    "atax.lisp",
    "convolution_col.lisp",
    "convolution_row.lisp",
    "gemv_n.lisp",
    "gemv_t.lisp",
    "gesummv.lisp",
    "kmeans_fmajor.lisp",
    "kmeans_rows.lisp",
    "md_nmajor.lisp",
    "md_rows.lisp",
    "mm.lisp",
    "mriq.lisp",
    "nbody.lisp",
    "nn.lisp",
    "sum.lisp",
    "transpose.lisp",
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cgo17")
}

fn suite() -> Vec<Example> {
    load_dir(&suite_dir(), "")
}

fn data_of(ex: &Example) -> Result<Vec<String>, String> {
    Ok(vec![ex.data_path().ok_or("no `;; data:` line")?])
}

#[test]
fn the_suite_is_complete_and_documented() {
    let names: Vec<String> = suite().into_iter().map(|ex| ex.name).collect();
    assert_eq!(names, SUITE, "bench/cgo17/*.lisp is not the suite listed in cgo17.rs");
    let readme = std::fs::read_to_string(suite_dir().join("README.md")).expect("bench/cgo17/README.md");
    for name in SUITE {
        assert!(
            readme.contains(&format!("`{name}`")),
            "README.md's table does not list `{name}`"
        );
    }
    for (name, _) in KNOWN_OPENCL_FAILURES {
        assert!(SUITE.contains(name), "the known failure {name} is not in the suite");
    }
}

#[test]
fn interpreter_gives_the_expected_results() {
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let expect = ex.header.expect.as_ref().ok_or("no `;; expect:` line")?;
            let res = lift::run_files(&ex.src, &data_of(ex)?, &[], &interp_options())
                .map_err(|e| e.render(&ex.name, &ex.src))?;
            let (want, got) = (
                parse_json(expect, "the expect: line"),
                parse_json(&res.json, "the interpreter's result"),
            );
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
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let data = data_of(ex)?;
            let known = KNOWN_OPENCL_FAILURES
                .iter()
                .find(|(n, _)| *n == ex.name)
                .map(|(_, m)| *m);
            let reference = lift::run_files(&ex.src, &data, &[], &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
            let res = lift::run_files(&ex.src, &data, &[], &opts);
            match (res, known) {
                (Ok(res), None) => {
                    let (want, got) = (
                        parse_json(&reference.json, "the interpreter's result"),
                        parse_json(&res.json, "the OpenCL result"),
                    );
                    if !json_close(&want, &got) {
                        return Err(format!("interpreter {want}\n     OpenCL {got}"));
                    }
                    Ok(())
                }
                (Err(e), None) => Err(format!("OpenCL: {}", e.render(&ex.name, &ex.src))),
                (Ok(_), Some(_)) => Err("runs on OpenCL now: take it off KNOWN_OPENCL_FAILURES".into()),
                (Err(e), Some(why)) => {
                    let rendered = e.render(&ex.name, &ex.src);
                    if mentions(&rendered, why) {
                        Ok(())
                    } else {
                        Err(format!(
                            "fails differently than KNOWN_OPENCL_FAILURES says (`{why}`):\n{rendered}"
                        ))
                    }
                }
            }
        },
    );
}

#[test]
fn types() {
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let text = lift::compile_text(&ex.src, lift::Emit::Types).map_err(|e| e.render(&ex.name, &ex.src))?;
            insta::with_settings!({
                snapshot_suffix => format!("cgo17__{}", ex.name),
                prepend_module_to_snapshot => false,
                omit_expression => true,
                description => format!("lift compile --emit types bench/cgo17/{}", ex.name),
            }, {
                insta::assert_snapshot!("types", text);
            });
            Ok(())
        },
    );
}
