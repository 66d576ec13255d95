//! The CGO'17 benchmark suite (`bench/cgo17/`): eleven benchmarks written as high-level programs.
//! Each one, at its small test size, gives its `expect:` line on the interpreter, equals the
//! interpreter on OpenCL (the rewriter's best variant, as `lift run` picks it), and has its typed
//! program snapshotted (`types@cgo17__<file>.snap`); at two larger shapes it equals the
//! interpreter on OpenCL, and so does every variant that `lift explore` keeps.
//!
//! Rewrite exploration runs in `lift` child processes, never in this one: egg interns symbols in
//! one table per process and orders them by interning order, and extraction depends on that
//! order, so exploring these programs here would change what other tests' explorations find
//! (seen on the `cl@hl_matvec.lisp` snapshot).

use crate::{check_all, interp_options, json_close, load_dir, mentions, parse_json, Example};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Programs that do not run on OpenCL today because of a compiler defect, each with a part of
/// the error it gives. The test fails when a listed program starts running (take it off the
/// list then), so the list only shrinks.
const KNOWN_OPENCL_FAILURES: &[(&str, &str)] = &[];

/// Programs that give a wrong result on OpenCL at a larger size (`LARGER_SHAPES`), with a part
/// of the mismatch message; the test fails when a listed one starts passing.
const KNOWN_LARGER_FAILURES: &[(&str, &str, &str)] = &[];

/// Programs where some variant that `lift explore` keeps gives a wrong result at the divisible
/// shape, with a part of the source that every wrong variant has (and no right one needs): the
/// test fails when a variant without it is wrong, or when no variant is wrong any more.
const KNOWN_WRONG_VARIANTS: &[(&str, &str)] = &[];

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
    "mriq_phimag.lisp",
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

/// A test's scratch folder (data files and `lift`'s cache), removed when the test ends, also
/// when it fails.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("lift-it-cgo17-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the `lift` binary with an empty tuning cache in `scratch` (so no earlier `lift tune` on
/// this machine picks the variant): its stdout, or its stderr when it fails.
pub(crate) fn lift_cli(args: &[&str], scratch: &Scratch) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .env("LIFT_CACHE_DIR", scratch.0.join("cache"))
        .output()
        .map_err(|e| format!("cannot run lift: {e}"))?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if out.status.success() {
        Ok(text(&out.stdout))
    } else {
        Err(text(&out.stderr))
    }
}

/// `lift run` on OpenCL, as the user runs it: the result as JSON, or the rendered error.
fn run_on_opencl(
    program: &Path,
    data: &str,
    device: &Option<String>,
    scratch: &Scratch,
) -> Result<serde_json::Value, String> {
    let program = program.display().to_string();
    let mut args = vec!["run", program.as_str(), "--data", data];
    if let Some(d) = device {
        args.extend(["--device", d.as_str()]);
    }
    lift_cli(&args, scratch).map(|out| parse_json(&out, "the OpenCL result"))
}

fn interpreter(ex: &Example, data: &[String]) -> Result<serde_json::Value, String> {
    let res = lift::run_files(&ex.src, data, &[], &interp_options())
        .map_err(|e| format!("interpreter: {}", e.render(&ex.name, &ex.src)))?;
    Ok(parse_json(&res.json, "the interpreter's result"))
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
    let known = KNOWN_OPENCL_FAILURES.iter().map(|(n, _)| n);
    let known = known.chain(KNOWN_LARGER_FAILURES.iter().map(|(n, ..)| n));
    for name in known.chain(KNOWN_WRONG_VARIANTS.iter().map(|(n, _)| n)) {
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
    let scratch = Scratch::new("small");
    check_all(
        &suite(),
        |ex| &ex.name,
        |ex| {
            let data = data_of(ex)?;
            let known = KNOWN_OPENCL_FAILURES
                .iter()
                .find(|(n, _)| *n == ex.name)
                .map(|(_, m)| *m);
            let want = interpreter(ex, &data)?;
            match (run_on_opencl(&ex.path, &data[0], &device, &scratch), known) {
                (Ok(got), None) if json_close(&want, &got) => Ok(()),
                (Ok(got), None) => Err(format!("interpreter {want}\n     OpenCL {got}")),
                (Err(e), None) => Err(format!("OpenCL: {e}")),
                (Ok(_), Some(_)) => Err("runs on OpenCL now: take it off KNOWN_OPENCL_FAILURES".into()),
                (Err(e), Some(why)) if mentions(&e, why) => Ok(()),
                (Err(e), Some(why)) => Err(format!(
                    "fails differently than KNOWN_OPENCL_FAILURES says (`{why}`):\n{e}"
                )),
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
        "mriq_phimag.lisp" => json!({ "phiR": grid(r, m * n, 4.0), "phiI": grid(r, m * n, 4.0) }),
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
        "nbody.lisp" => {
            // Bodies on a lattice of spacing 3/4 with positive masses in w, and a softening
            // of 1, so that no sum of accelerations is dominated by rounding.
            let pos: Vec<serde_json::Value> = (0..m)
                .map(|i| {
                    let mass = (r.below(8) + 1) as f64 / 4.0;
                    json!([
                        (i % 4) as f64 * 0.75,
                        (i / 4 % 4) as f64 * 0.75,
                        (i / 16) as f64 * 0.75,
                        mass
                    ])
                })
                .collect();
            let vel: Vec<serde_json::Value> = (0..m)
                .map(|_| json!([grid(r, 1, 4.0)[0], grid(r, 1, 4.0)[0], grid(r, 1, 4.0)[0], 0.0]))
                .collect();
            json!({ "pos": pos, "vel": vel, "espSqr": 1.0, "deltaT": 0.125 })
        }
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
    let scratch = Scratch::new("larger");
    let cases = larger_cases();
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let data = case.write_input(&scratch)?;
            let want = interpreter(&case.ex, &data)?;
            let outcome = run_on_opencl(&case.ex.path, &data[0], &device, &scratch)
                .map_err(|e| format!("OpenCL: {e}"))
                .and_then(|got| {
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
                .find(|(name, s, _)| *name == case.ex.name && *s == case.shape)
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

impl Case {
    /// Writes the case's generated input into `dir`: the `--data` argument for it.
    fn write_input(&self, scratch: &Scratch) -> Result<Vec<String>, String> {
        let input = larger_input(&self.ex.name, self.m, self.n, self.seed);
        let path = scratch.0.join(format!("{}-{}.json", self.ex.name, self.shape));
        std::fs::write(&path, input.to_string()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(vec![path.display().to_string()])
    }
}

fn clone_example(ex: &Example) -> Example {
    Example {
        name: ex.name.clone(),
        path: ex.path.clone(),
        src: ex.src.clone(),
        header: crate::Header::parse(&ex.src),
    }
}

/// Compiles a program exactly as written (no variant choice) and runs it on `sources`.
fn run_as_written(
    src: &str,
    sources: &[lift::data::DataSource],
    opts: &lift::RunOptions,
) -> Result<lift::RunResult, lift::Error> {
    let c = lift::compile(
        src,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )?;
    let inputs = lift::data::load(&c.given, sources, &[]).map_err(|e| lift::Error::plain(e.message))?;
    lift::run_compiled(&c, &inputs, opts)
}

/// The variants in `lift explore`'s output: `;; variant i: ...`, a `;; description` line, then
/// the program, up to the next variant.
/// `lift explore --top <top>` of an example at the sizes of its written input `data`: the
/// variants (description, source), the input's sources and the `--size` flags given.
type Explored = (Vec<(String, String)>, Vec<lift::data::DataSource>, Vec<String>);

fn explore_at_input(ex: &Example, data: &[String], top: &str, scratch: &Scratch) -> Result<Explored, String> {
    let typed = lift::compile(&ex.src, &lift::Options::types_only()).map_err(|e| e.message())?;
    let sources = lift::read_sources(data).map_err(|e| e.message())?;
    let sizes = lift::data::load(&typed.given, &sources, &[])
        .map_err(|e| e.message)?
        .sizes;
    let sizes: Vec<String> = sizes.iter().map(|(k, v)| format!("--size={k}={v}")).collect();
    let path = ex.path.display().to_string();
    let mut args = vec!["explore", path.as_str(), "--top", top];
    args.extend(sizes.iter().map(String::as_str));
    let variants = explored_variants(&lift_cli(&args, scratch).map_err(|e| format!("lift explore: {e}"))?);
    Ok((variants, sources, sizes))
}

fn explored_variants(output: &str) -> Vec<(String, String)> {
    let mut variants: Vec<(String, String)> = vec![];
    let mut lines = output.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with(";; variant ") {
            continue;
        }
        let description = lines.next().unwrap_or("").trim_start_matches(";; ").to_string();
        let mut source = String::new();
        while let Some(l) = lines.next_if(|l| !l.starts_with(";; variant ")) {
            source.push_str(l);
            source.push('\n');
        }
        variants.push((description, source));
    }
    variants
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
    let scratch = Scratch::new("variants");
    let cases: Vec<Case> = larger_cases()
        .into_iter()
        .filter(|c| c.shape == LARGER_SHAPES[0].0)
        .collect();
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let ex = &case.ex;
            let data = case.write_input(&scratch)?;
            let (variants, sources, _) = explore_at_input(ex, &data, "8", &scratch)?;
            if variants.is_empty() {
                return Err("lift explore printed no variant".into());
            }
            let want = interpreter(ex, &data)?;
            let mut wrong = vec![];
            for (i, (description, source)) in variants.iter().enumerate() {
                // As written, not `run_files` or `lift run`: a variant may keep a layout-only
                // `map` (mm's tiles), which `run_files` takes for a high-level program and
                // explores again instead of running the variant.
                let got = run_as_written(source, &sources, &opts)
                    .map_err(|e| format!("variant {i} fails on OpenCL: {}\n{source}", e.message()))?;
                let got = parse_json(&got.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    wrong.push((i, description, source));
                }
            }
            let known = KNOWN_WRONG_VARIANTS
                .iter()
                .find(|(n, _)| *n == ex.name)
                .map(|(_, m)| *m);
            if known.is_some() && wrong.is_empty() {
                return Err("no variant is wrong any more: take it off KNOWN_WRONG_VARIANTS".into());
            }
            match wrong
                .iter()
                .find(|(.., source)| known.is_none_or(|k| !source.contains(k)))
            {
                None => Ok(()),
                Some((i, description, source)) => Err(format!(
                    "variant {i} of {} differs from the interpreter ({description}):\n{source}",
                    variants.len()
                )),
            }
        },
    );
}

/// The kernels of the cooperative reductions as the rewriter's best variants at the suite's
/// large sizes (`lift explore`, variant 0), snapshotted as `cl@cgo17_best__<file>_<sizes>.snap`:
/// the work-group reduction of a row (gemv N, gesummv) and of a whole array in chunks (sum).
#[test]
fn work_group_reduction_kernels() {
    let scratch = Scratch::new("wg-kernels");
    let cases: &[(&str, &[&str])] = &[
        ("gemv_n.lisp", &["M=8192", "N=8192"]),
        ("gesummv.lisp", &["M=8192", "N=8192"]),
        ("sum.lisp", &["N=100000000"]),
    ];
    check_all(
        cases,
        |(name, _)| name,
        |(name, sizes)| {
            snapshot_best_kernel(
                name,
                sizes,
                "work-group reduction",
                "a work-group reduction",
                "cgo17_best",
                &scratch,
            )
        },
    );
}

/// The variants that stage a block of rows in local memory (`stage-rows`): k-means with its
/// points as rows and md with its neighbour lists as rows, at shapes whose rows are long
/// enough to be staged (`larger_input` makes `n % 9 + 3` features and `n % 16 + 4`
/// neighbours), on OpenCL against the interpreter. The divisible shape of
/// `every_explored_variant_equals_the_interpreter` has rows too short for the rule.
#[test]
fn staged_row_variants_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let scratch = Scratch::new("staged-rows");
    let cases: Vec<Case> = suite()
        .iter()
        .filter_map(|ex| {
            let (m, n) = match ex.name.as_str() {
                "kmeans_rows.lisp" => (64, 8),
                "md_rows.lisp" => (64, 12),
                _ => return None,
            };
            Some(Case {
                label: ex.name.clone(),
                ex: clone_example(ex),
                shape: "staged",
                m,
                n,
                seed: 29,
            })
        })
        .collect();
    assert_eq!(cases.len(), 2, "kmeans_rows.lisp and md_rows.lisp");
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let ex = &case.ex;
            let data = case.write_input(&scratch)?;
            let (variants, sources, sizes) = explore_at_input(ex, &data, "16", &scratch)?;
            let staged: Vec<&(String, String)> = variants
                .iter()
                .filter(|(description, _)| description.contains("rows staged in local memory"))
                .collect();
            if staged.is_empty() {
                return Err(format!("no staged variant among {} ({sizes:?})", variants.len()));
            }
            let want = interpreter(ex, &data)?;
            for (description, source) in staged {
                if !source.contains("(toLocal") {
                    return Err(format!("{description}: nothing is copied to local memory:\n{source}"));
                }
                let got = run_as_written(source, &sources, &opts)
                    .map_err(|e| format!("{description} fails on OpenCL: {}\n{source}", e.message()))?;
                let got = parse_json(&got.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    return Err(format!(
                        "{description} differs from the interpreter ({}):\n{source}",
                        first_difference(&want, &got)
                    ));
                }
            }
            Ok(())
        },
    );
}

/// The column-block reductions (`col-reduce-*`) of gemv T, atax and the independently written
/// `examples/col_sums.lisp`: every such variant that `lift explore` keeps (top 16) at an input
/// its blocks divide, on OpenCL against the interpreter.
#[test]
fn column_block_variants_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let scratch = Scratch::new("column-blocks");
    let col_sums = crate::examples()
        .into_iter()
        .find(|ex| ex.name == "col_sums.lisp")
        .expect("examples/col_sums.lisp");
    let mut cases: Vec<(Example, Vec<String>)> = suite()
        .iter()
        .filter(|ex| ["gemv_t.lisp", "atax.lisp"].contains(&ex.name.as_str()))
        .map(|ex| {
            let path = scratch.0.join(format!("{}-blocks.json", ex.name));
            std::fs::write(&path, larger_input(&ex.name, 64, 128, 31).to_string()).expect("writes the input");
            (clone_example(ex), vec![path.display().to_string()])
        })
        .collect();
    let data = col_sums.data_path().expect("examples/col_sums.lisp has data");
    cases.push((col_sums, vec![data]));
    assert_eq!(cases.len(), 3);
    check_all(
        &cases,
        |(ex, _)| &ex.name,
        |(ex, data)| {
            let (variants, sources, sizes) = explore_at_input(ex, data, "16", &scratch)?;
            let blocks: Vec<&(String, String)> = variants
                .iter()
                .filter(|(description, _)| description.contains("column blocks"))
                .collect();
            if blocks.is_empty() {
                return Err(format!("no column-block variant among {} ({sizes:?})", variants.len()));
            }
            let want = interpreter(ex, data)?;
            for (description, source) in blocks {
                let got = run_as_written(source, &sources, &opts)
                    .map_err(|e| format!("{description} fails on OpenCL: {}\n{source}", e.message()))?;
                let got = parse_json(&got.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    return Err(format!(
                        "{description} differs from the interpreter ({}):\n{source}",
                        first_difference(&want, &got)
                    ));
                }
            }
            Ok(())
        },
    );
}

/// The column-block kernels as the rewriter's best variants at the suite's large sizes
/// (`lift explore`, variant 0), snapshotted as `cl@colreduce__<file>_<sizes>.snap`.
#[test]
fn column_block_kernels() {
    let scratch = Scratch::new("column-block-kernels");
    let cases: &[(&str, &[&str])] = &[
        ("gemv_t.lisp", &["M=8192", "N=8192"]),
        ("atax.lisp", &["M=8192", "N=8192"]),
    ];
    check_all(
        cases,
        |(name, _)| name,
        |(name, sizes)| {
            snapshot_best_kernel(
                name,
                sizes,
                "column blocks",
                "a column-block reduction",
                "colreduce",
                &scratch,
            )
        },
    );
}

/// The variants that read an array every work-item reads whole in tiles staged in local
/// memory (`reuse-tiles-*`): n-body's positions and mri-q's k-space samples, at sizes where
/// tiles of 64 divide them (N = 512 bodies; K = 512 samples), on OpenCL against the
/// interpreter.
#[test]
fn loc_reuse_tile_variants_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let scratch = Scratch::new("loc-reuse-tiles");
    let cases: Vec<Case> = suite()
        .iter()
        .filter_map(|ex| {
            let (m, n) = match ex.name.as_str() {
                "nbody.lisp" => (512, 1),
                "mriq.lisp" => (16, 512),
                _ => return None,
            };
            Some(Case {
                label: ex.name.clone(),
                ex: clone_example(ex),
                shape: "reuse",
                m,
                n,
                seed: 31,
            })
        })
        .collect();
    assert_eq!(cases.len(), 2, "nbody.lisp and mriq.lisp");
    check_all(
        &cases,
        |case| &case.label,
        |case| {
            let ex = &case.ex;
            let data = case.write_input(&scratch)?;
            let (variants, sources, sizes) = explore_at_input(ex, &data, "16", &scratch)?;
            let tiled: Vec<&(String, String)> = variants
                .iter()
                .filter(|(description, _)| description.contains("staged in local memory"))
                .collect();
            if tiled.len() < 2 {
                return Err(format!(
                    "{} tiled variants among {} ({sizes:?})",
                    tiled.len(),
                    variants.len()
                ));
            }
            let want = interpreter(ex, &data)?;
            for (description, source) in tiled {
                if !source.contains("(toLocal") {
                    return Err(format!("{description}: nothing is copied to local memory:\n{source}"));
                }
                let got = run_as_written(source, &sources, &opts)
                    .map_err(|e| format!("{description} fails on OpenCL: {}\n{source}", e.message()))?;
                let got = parse_json(&got.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    return Err(format!(
                        "{description} differs from the interpreter ({}):\n{source}",
                        first_difference(&want, &got)
                    ));
                }
            }
            Ok(())
        },
    );
}

/// The kernels of the rewriter's best variants of the programs this work made faster, at the
/// suite's large sizes (`lift explore`, variant 0), snapshotted as
/// `cl@loc_best__<file>_<sizes>.snap`: n-body reading its positions in tiles through local
/// memory, md folding its forces as it gathers them, k-means folding the argmin over the
/// centres as it computes each distance (neither through a temporary in global memory).
#[test]
fn loc_best_kernels() {
    let scratch = Scratch::new("loc-kernels");
    let cases: &[(&str, &[&str], &str)] = &[
        ("nbody.lisp", &["N=131072"], "pos read in tiles of"),
        ("md_nmajor.lisp", &["N=73728", "M=128"], "reduce∘map fused"),
        ("kmeans_fmajor.lisp", &["P=819200", "F=34", "C=5"], "reduce∘join fused"),
    ];
    check_all(
        cases,
        |(name, ..)| name,
        |(name, sizes, want)| {
            snapshot_best_kernel(
                name,
                sizes,
                want,
                &format!("the expected one ({want})"),
                "loc_best",
                &scratch,
            )
        },
    );
}

/// Snapshots the OpenCL of the rewriter's best variant of suite program `name` at `sizes`
/// (`lift explore --top 1`, variant 0) as `cl@<prefix>__<file>_<sizes>.snap`, after checking
/// that its description contains `want` (else the error names it as `what`).
fn snapshot_best_kernel(
    name: &str,
    sizes: &[&str],
    want: &str,
    what: &str,
    prefix: &str,
    scratch: &Scratch,
) -> Result<(), String> {
    let path = suite_dir().join(name).display().to_string();
    let mut args = vec!["explore".to_string(), path, "--top".into(), "1".into()];
    args.extend(sizes.iter().map(|s| format!("--size={s}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = lift_cli(&args, scratch).map_err(|e| format!("lift explore: {e}"))?;
    let (description, source) = explored_variants(&out)
        .into_iter()
        .next()
        .ok_or("lift explore printed no variant")?;
    if !description.contains(want) {
        return Err(format!("the best variant is not {what}: {description}"));
    }
    let compiled = lift::compile(
        &source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .map_err(|e| e.message())?;
    let cl = compiled.text(lift::Emit::Cl).map_err(|e| e.message())?;
    let suffix = format!("{}_{}", name.trim_end_matches(".lisp"), sizes.join("_"));
    insta::with_settings!({
        snapshot_suffix => format!("{prefix}__{suffix}"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => format!("lift explore bench/cgo17/{name} --top 1 {}, then --emit cl", sizes.join(" ")),
    }, {
        insta::assert_snapshot!("cl", format!(";; {description}\n{cl}"));
    });
    Ok(())
}
