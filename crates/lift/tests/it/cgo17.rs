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

/// Programs that give a wrong result on OpenCL at a larger size (`LARGER_SHAPES`), with a part
/// of the mismatch message; the test fails when a listed one starts passing.
const KNOWN_LARGER_FAILURES: &[(&str, &str, &str)] = &[
    // At M = 64 the best variant reads each row of `transpose m` with `asVector 4`, and the
    // back end loads 4 adjacent words (`vload4`) where the row's elements are N apart.
    ("transpose.lisp", "divisible", "differs from the interpreter"),
];

/// Two shapes per program: one whose lengths are multiples of 4, 16 and 64 (so the rewriter's
/// tiling and vectorizing rules apply), one of primes (partial work-groups, no tiling).
const LARGER_SHAPES: &[(&str, usize, usize)] = &[("divisible", 64, 128), ("primes", 37, 53)];

/// Values on a grid of 1/4 in [-2, 2): sums and products of a few are exact in float32, so any
/// summation order gives the same result.
fn grid(r: &mut ir::rng::XorShift, n: usize, den: f64) -> serde_json::Value {
    (0..n)
        .map(|_| serde_json::json!((r.below(16) as f64 - 8.0) / den))
        .collect()
}

fn grid_matrix(r: &mut ir::rng::XorShift, rows: usize, cols: usize) -> serde_json::Value {
    (0..rows).map(|_| grid(r, cols, 4.0)).collect()
}

fn transposed(m: &serde_json::Value) -> serde_json::Value {
    let rows = m.as_array().expect("a matrix");
    let cols = rows.first().and_then(|r| r.as_array()).map_or(0, Vec::len);
    (0..cols)
        .map(|j| rows.iter().map(|r| r[j].clone()).collect::<Vec<_>>())
        .collect()
}

/// Inputs of `program` at the shape `(m, n)`.
fn larger_input(program: &str, m: usize, n: usize, seed: u64) -> serde_json::Value {
    use serde_json::json;
    let r = &mut ir::rng::XorShift::new(seed);
    match program {
        "nn.lisp" => json!({ "locs": grid_matrix(r, m * n, 2), "lat": 0.5, "lng": -1.0 }),
        "mriq.lisp" => json!({
            "x": grid(r, 4 * m, 8.0), "y": grid(r, 4 * m, 8.0), "z": grid(r, 4 * m, 8.0),
            "kx": grid(r, n, 16.0), "ky": grid(r, n, 16.0), "kz": grid(r, n, 16.0),
            "phiMag": (0..n).map(|_| json!((r.below(8) + 1) as f64 / 4.0)).collect::<serde_json::Value>(),
        }),
        "kmeans_rows.lisp" | "kmeans_fmajor.lisp" => {
            let points = grid_matrix(r, 8 * m, n % 9 + 3);
            let centres = grid_matrix(r, 5, n % 9 + 3);
            if program == "kmeans_rows.lisp" {
                json!({ "points": points, "centres": centres })
            } else {
                json!({ "features": transposed(&points), "centres": centres })
            }
        }
        "md_rows.lisp" | "md_nmajor.lisp" => {
            // Particles on a lattice of spacing 3/4 (no two at one place), each with
            // `neighbours` distinct other particles, some of them beyond the cutoff.
            let (count, neighbours) = (4 * m, n % 16 + 4);
            let particles: Vec<serde_json::Value> = (0..count)
                .map(|i| {
                    json!([
                        (i % 10) as f64 * 0.75,
                        (i / 10 % 10) as f64 * 0.75,
                        (i / 100) as f64 * 0.75,
                        0.0
                    ])
                })
                .collect();
            let lists: Vec<Vec<i64>> = (0..count)
                .map(|i| {
                    let mut list: Vec<i64> = vec![];
                    while list.len() < neighbours {
                        let j = ((i + 1 + r.below(count - 1)) % count) as i64;
                        if !list.contains(&j) {
                            list.push(j);
                        }
                    }
                    list
                })
                .collect();
            let lists = json!(lists);
            let lists = if program == "md_rows.lisp" {
                lists
            } else {
                transposed(&lists)
            };
            json!({ "particles": particles, "neighbours": lists, "cutsq": 16.0, "lj1": 1.5, "lj2": 2.0 })
        }
        "convolution_row.lisp" | "convolution_col.lisp" => {
            json!({ "img": grid_matrix(r, m, n), "weights": grid(r, 17, 4.0) })
        }
        "gemv_n.lisp" => json!({
            "a": grid_matrix(r, m, n), "x": grid(r, n, 4.0), "y": grid(r, m, 4.0), "alpha": 1.5, "beta": -0.5,
        }),
        "gemv_t.lisp" => json!({
            "a": grid_matrix(r, m, n), "x": grid(r, m, 4.0), "y": grid(r, n, 4.0), "alpha": 1.5, "beta": -0.5,
        }),
        "atax.lisp" => json!({ "a": grid_matrix(r, m, n), "x": grid(r, n, 4.0) }),
        "gesummv.lisp" => json!({
            "a": grid_matrix(r, m, n), "b": grid_matrix(r, m, n), "x": grid(r, n, 4.0), "alpha": 1.5, "beta": -0.5,
        }),
        "mm.lisp" => json!({ "a": grid_matrix(r, m, n / 4), "b": grid_matrix(r, n / 4, m) }),
        "sum.lisp" => json!({ "xs": grid(r, m * n, 4.0) }),
        "transpose.lisp" => json!({ "m": grid_matrix(r, m, n) }),
        other => panic!("no larger input for {other}"),
    }
}

/// Each program (but those that fail on OpenCL already at the small size) at two larger
/// shapes, on OpenCL against the interpreter: small data fits one work-group and no tiling
/// rule applies, so it cannot show defects of the tiled and vectorized variants.
#[test]
fn opencl_equals_the_interpreter_at_larger_sizes() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let dir = std::env::temp_dir().join(format!("lift-it-cgo17-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = larger_cases();
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let Case { ex, shape, m, n, .. } = case;
            let input = larger_input(&ex.name, *m, *n, case.seed);
            let path = dir.join(format!("{}-{shape}.json", ex.name));
            std::fs::write(&path, input.to_string()).map_err(|e| e.to_string())?;
            let data = vec![path.display().to_string()];
            let reference = lift::run_files(&ex.src, &data, &[], &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
            let outcome = lift::run_files(&ex.src, &data, &[], &opts)
                .map_err(|e| format!("OpenCL: {}", e.render(&ex.name, &ex.src)))
                .and_then(|res| {
                    let (want, got) = (
                        parse_json(&reference.json, "the interpreter's result"),
                        parse_json(&res.json, "the OpenCL result"),
                    );
                    if json_close(&want, &got) {
                        Ok(())
                    } else {
                        Err(format!(
                            "OpenCL differs from the interpreter: {}",
                            first_difference(&want, &got)
                        ))
                    }
                });
            let known = KNOWN_LARGER_FAILURES
                .iter()
                .find(|(name, s, _)| *name == ex.name && s == shape)
                .map(|(.., why)| *why);
            match (outcome, known) {
                (Ok(()), None) => Ok(()),
                (Err(e), None) => Err(e),
                (Ok(()), Some(_)) => Err("passes now: take it off KNOWN_LARGER_FAILURES".into()),
                (Err(e), Some(why)) if e.contains(why) => Ok(()),
                (Err(e), Some(why)) => Err(format!(
                    "fails differently than KNOWN_LARGER_FAILURES says (`{why}`): {e}"
                )),
            }
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every program (but those that fail on OpenCL already at the small size) at each shape of
/// `LARGER_SHAPES`.
fn larger_cases() -> Vec<Case> {
    suite()
        .iter()
        .filter(|ex| !KNOWN_OPENCL_FAILURES.iter().any(|(n, _)| *n == ex.name))
        .flat_map(|ex| {
            LARGER_SHAPES.iter().enumerate().map(move |(k, &(shape, m, n))| Case {
                label: format!("{} ({shape})", ex.name),
                ex: clone_example(ex),
                shape,
                m,
                n,
                seed: 17 + k as u64,
            })
        })
        .collect()
}

struct Case {
    label: String,
    ex: Example,
    shape: &'static str,
    m: usize,
    n: usize,
    seed: u64,
}

fn clone_example(ex: &Example) -> Example {
    Example {
        name: ex.name.clone(),
        path: ex.path.clone(),
        src: ex.src.clone(),
        header: crate::Header::parse(&ex.src),
    }
}

/// The first element where two results differ, by its index path, for the failure message.
fn first_difference(want: &serde_json::Value, got: &serde_json::Value) -> String {
    fn walk(want: &serde_json::Value, got: &serde_json::Value, path: &mut Vec<usize>) -> Option<String> {
        match (want.as_array(), got.as_array()) {
            (Some(a), Some(b)) if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    path.push(i);
                    if let Some(d) = walk(x, y, path) {
                        return Some(d);
                    }
                    path.pop();
                }
                None
            }
            _ if json_close(want, got) => None,
            _ => Some(format!("at {path:?} the interpreter gives {want}, OpenCL {got}")),
        }
    }
    walk(want, got, &mut vec![]).unwrap_or_else(|| "(no element differs)".into())
}

/// Programs where some variant that `lift explore` keeps gives a wrong result at the divisible
/// shape, with a part of the source that every wrong variant has (and no right one needs): the
/// test fails when a variant without it is wrong, or when no variant is wrong any more.
const KNOWN_WRONG_VARIANTS: &[(&str, &str)] = &[
    // `asVector 4` on a row of `transpose m` (a strided row) compiles to `vload4` of 4
    // adjacent words; the cost model ranks these variants first.
    ("transpose.lisp", "(asVector #4 row)"),
];

/// Every variant the rewriter keeps (its top 8) for each program at the divisible shape, on
/// OpenCL against the interpreter: `lift tune` may pick any of them, so each must be right.
#[test]
fn every_explored_variant_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let dir = std::env::temp_dir().join(format!("lift-it-cgo17-variants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases: Vec<Case> = larger_cases()
        .into_iter()
        .filter(|c| c.shape == LARGER_SHAPES[0].0)
        .collect();
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let ex = &case.ex;
            let input = larger_input(&ex.name, case.m, case.n, case.seed);
            let path = dir.join(format!("{}.json", ex.name));
            std::fs::write(&path, input.to_string()).map_err(|e| e.to_string())?;
            let data = vec![path.display().to_string()];
            let (prog, info) = lift::front(&ex.src).map_err(|e| e.message)?;
            let sources = lift::read_sources(&data).map_err(|e| e.message())?;
            let inputs = lift::data::load(&prog, &sources, &[]).map_err(|e| e.message)?;
            let ropts = rewrite::Options {
                sizes: inputs.sizes.clone(),
                top_k: 8,
                ..rewrite::Options::default()
            };
            let variants = rewrite::explore(&prog, &info, &ropts).map_err(|e| e.message)?.variants;
            let reference = lift::run_files(&ex.src, &data, &[], &interp_options())
                .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
            let want = parse_json(&reference.json, "the interpreter's result");
            let mut wrong = vec![];
            for (i, v) in variants.iter().enumerate() {
                let res = lift::run_files(&v.source, &data, &[], &opts).map_err(|e| {
                    format!(
                        "variant {i} fails on OpenCL: {}
{}",
                        e.message(),
                        v.source
                    )
                })?;
                let got = parse_json(&res.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    wrong.push((i, v));
                }
            }
            let known = KNOWN_WRONG_VARIANTS
                .iter()
                .find(|(n, _)| *n == ex.name)
                .map(|(_, m)| *m);
            match known {
                None if wrong.is_empty() => Ok(()),
                Some(_) if wrong.is_empty() => {
                    Err("no variant is wrong any more: take it off KNOWN_WRONG_VARIANTS".into())
                }
                _ => match wrong.iter().find(|(_, v)| known.is_none_or(|k| !v.source.contains(k))) {
                    None => Ok(()),
                    Some((i, v)) => Err(format!(
                        "variant {i} of {} differs from the interpreter ({}):\n{}",
                        variants.len(),
                        v.description,
                        v.source
                    )),
                },
            }
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}
