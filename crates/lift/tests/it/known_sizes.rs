//! Kernels built for their sizes are validated with them (`validate::validate_with`): a private
//! array, a private accumulator or an unrolled loop whose length a size fixes is refused by
//! `lift compile` (generic kernels) with its span, runs under `lift run` (which builds the
//! kernels for the inputs' sizes) and equals the interpreter; beyond the private-memory and
//! unrolling limits the same run is a clear error at the same place. `lift explore` validates as
//! `lift tune` measures, the private-memory and unrolling limits count what a kernel really
//! holds, and `at` with an index known in range carries no run-time check.

use crate::rows_layouts::Scratch;
use crate::{json_close, mentions, parse_json};
use std::path::Path;
use std::process::{Command, Output};

/// Rows of length `M`: a private copy read backwards, an unrolled map, and a private
/// accumulator of a whole row (updated in place) over `K` rows.
/// (name, program, its error in generic kernels, the source shown with it)
const PROGRAMS: &[(&str, &str, &str, &str)] = &[
    (
        "private",
        "(lift (M N) ((array-type (array-type float M) N))
  (lambda (xs)
    (mapGlb (lambda (row)
      (let p (toPrivate (mapSeq (lambda (x) (* x 2.0f)) row))
        (toGlobal (mapSeq (lambda (y) (+ y 1.0f)) (reverse p))))) xs)))",
        "a private array must have a size known at compile time, but this one has length M",
        "(let p (toPrivate",
    ),
    (
        "unrolled",
        "(lift (M N) ((array-type (array-type float M) N))
  (lambda (xs)
    (mapGlb (lambda (row) (toGlobal (mapSeqUnroll (lambda (x) (- (* x x) 0.5f)) row))) xs)))",
        "`mapSeqUnroll`/`reduceSeqUnroll` need a length known at compile time, not M",
        "(toGlobal (mapSeqUnroll",
    ),
    (
        "accumulator",
        "(lift (M K N) ((array-type (array-type (array-type float M) K) N))
  (lambda (xs)
    (mapGlb
      (lambda (rows)
        (toGlobal (mapSeq (lambda (s) s)
          (join (reduceSeq
                  (lambda (acc row) (toPrivate (mapSeqUnroll (lambda (p) (+ (get #0 p) (get #1 p))) (zip acc row))))
                  (toPrivate (mapSeqUnroll (lambda (x) 0.0f) (at 0 rows)))
                  rows)))))
      xs)))",
        "need a length known at compile time, not M",
        "(toPrivate (mapSeqUnroll (lambda (x) 0.0f)",
    ),
];

fn lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .output()
        .expect("run the lift binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `xs` of `n` rows (or `n` groups of `k` rows) of `m` floats, exact in float32.
fn data(dir: &Path, name: &str, m: usize, k: usize, n: usize) -> String {
    let row = |i: usize| -> String {
        let xs: Vec<String> = (0..m)
            .map(|j| format!("{}", ((i * 7 + j * 3) % 17) as f32 * 0.25 - 2.0))
            .collect();
        format!("[{}]", xs.join(","))
    };
    let rows: Vec<String> = if name == "accumulator" {
        (0..n)
            .map(|g| format!("[{}]", (0..k).map(|r| row(g * k + r)).collect::<Vec<_>>().join(",")))
            .collect()
    } else {
        (0..n).map(row).collect()
    };
    let path = dir.join(format!("{name}-{m}.json"));
    std::fs::write(&path, format!("{{\"xs\":[{}]}}", rows.join(","))).expect("write data");
    path.to_string_lossy().into_owned()
}

fn write_program(dir: &Path, name: &str, src: &str) -> String {
    let path = dir.join(format!("{name}.lisp"));
    std::fs::write(&path, src).expect("write program");
    path.to_string_lossy().into_owned()
}

fn assert_user_error(out: &Output, needle: &str, at: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a user error exits with 1:\n{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("internal"), "{stderr}");
    assert!(
        mentions(&stderr, needle),
        "stderr does not mention `{needle}`:\n{stderr}"
    );
    assert!(stderr.contains(at), "the diagnostic does not show `{at}`:\n{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn known_sizes_make_private_and_unrolled_lengths_legal() {
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-known-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).expect("scratch dir");
    let device = crate::opencl::device();
    for (name, src, generic, at) in PROGRAMS {
        let prog = write_program(&scratch.0, name, src);
        // generic kernels: refused at the construct, with its span
        assert_user_error(&lift(&["compile", &prog]), generic, at);
        let Some(device) = &device else { continue };
        let d = data(&scratch.0, name, 12, 3, 37);
        let mut args = vec!["run", prog.as_str(), "--data", d.as_str()];
        if let Some(dev) = device {
            args.extend(["--device", dev]);
        }
        let got = lift(&args);
        assert!(got.status.success(), "{name}: {}", text(&got.stderr));
        let want = lift(&["run", &prog, "--data", &d, "--backend", "interp"]);
        assert!(want.status.success(), "{name}: {}", text(&want.stderr));
        assert!(
            json_close(
                &parse_json(&text(&want.stdout), "the interpreter's result"),
                &parse_json(&text(&got.stdout), "OpenCL's result")
            ),
            "{name}: OpenCL differs from the interpreter:\n{}\n{}",
            text(&got.stdout),
            text(&want.stdout)
        );
    }
}

#[test]
fn known_sizes_beyond_the_private_limits_are_clear_errors() {
    let Some(device) = crate::opencl::device() else { return };
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-known-big-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).expect("scratch dir");
    let want: &[(&str, &str)] = &[
        (
            "private",
            "this private array holds 2000 values (length M = 2000), more than the 1024 a work-item may keep in private memory; use toLocal or toGlobal",
        ),
        (
            "unrolled",
            "`mapSeqUnroll`/`reduceSeqUnroll` are limited to 1024 steps, as the generated code holds the body once per step, but this one has 2000 (length M = 2000)",
        ),
    ];
    for (name, needle) in want {
        let src = PROGRAMS.iter().find(|p| p.0 == *name).expect("program").1;
        let prog = write_program(&scratch.0, name, src);
        let d = data(&scratch.0, name, 2000, 1, 3);
        let mut args = vec!["run", prog.as_str(), "--data", d.as_str()];
        if let Some(dev) = &device {
            args.extend(["--device", dev]);
        }
        let at = if *name == "private" {
            "(let p (toPrivate"
        } else {
            "(toGlobal (mapSeqUnroll"
        };
        assert_user_error(&lift(&args), needle, at);
    }
}

/// The one aligned-read rewrite (`Gen::aligned_vectors`): whole `float4` reads of a global
/// buffer take the aligned form `((const global float4*)b)[i]` in the grid reduction's first
/// stage of a generic kernel and in every kernel built for its sizes; another generic kernel
/// keeps `vload4`.
#[test]
fn known_sizes_one_aligned_read_rewrite() {
    let compile = |src: &str, sizes: &[(&str, i64)], specialise: bool| {
        let opts = lift::Options {
            sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            specialise,
            ..lift::Options::default()
        };
        let c = lift::compile(src, &opts).unwrap_or_else(|e| panic!("{}", e.message()));
        c.plan.expect("kernels").source
    };
    let aligned = "((const global float4*)v_xs)[";
    let sum = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";
    // the cost model's pick at 10^8 is the float4 grid reduction, here with N a kernel argument
    let grid = compile(sum, &[("N", 100_000_000)], false);
    assert!(
        grid.contains("int v_N") && grid.contains(aligned) && !grid.contains("vload4"),
        "{grid}"
    );
    let map = "(lift (N) ((array-type float N)) (lambda (xs)
      (toGlobal (mapGlb (lambda (v) (dot v v)) (asVector #4 xs)))))";
    let generic = compile(map, &[], false);
    assert!(generic.contains("vload4(") && !generic.contains(aligned), "{generic}");
    let known = compile(map, &[("N", 4096)], true);
    assert!(known.contains(aligned) && !known.contains("vload4"), "{known}");
}

/// The peak resident memory (`VmHWM`, KiB) of `lift` run with `args`, read from `/proc` while
/// it runs (the peak only grows, so the last reading before it exits is the peak of all but
/// its last moments); `None` where `/proc` has no such field.
fn peak_kib(args: &[&str]) -> Option<u64> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the lift binary");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = None;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let hwm = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak = hwm.max(peak);
        }
        if let Some(s) = child.try_wait().expect("wait for lift") {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err).ok();
            assert!(s.success(), "lift {args:?}: {err}");
            return peak;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `lift bench` without `--check` makes its inputs as buffer bytes and does not decode the
/// result (as `lift tune` does): no interpreter values of 8·10^6 floats in and out, so its peak
/// memory is well under that of the same bench with `--check` (which needs the values); before
/// the lean inputs it was 0.77 of it (672 against 877 MiB), now 0.44 (382 MiB).
#[test]
fn known_sizes_bench_without_check_holds_no_values() {
    let Some(device) = crate::opencl::device() else { return };
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-known-bench-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).expect("scratch dir");
    let prog = write_program(
        &scratch.0,
        "double",
        "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))",
    );
    let mut args = vec!["bench", prog.as_str(), "--size", "N=8000000", "--repeats", "1"];
    if let Some(dev) = &device {
        args.extend(["--device", dev]);
    }
    let Some(lean) = peak_kib(&args) else { return };
    args.push("--check");
    let Some(checked) = peak_kib(&args) else { return };
    assert!(
        (lean as f64) < 0.6 * checked as f64,
        "lift bench without --check peaked at {lean} KiB, with it {checked} KiB"
    );
}

fn scratch(name: &str) -> Scratch {
    let s = Scratch(std::env::temp_dir().join(format!("lift-it-known-sizes-{name}-{}", std::process::id())));
    std::fs::create_dir_all(&s.0).expect("scratch dir");
    s
}

/// Sums of rows of 8: with the sizes built in, `reduceSeqUnroll` over the `M/4` rows of
/// `transpose (split 4 r)` is legal (`rewrite`'s `built_in_sizes_make_unrolled_variants_legal`).
const ROW_SUMS: &str = "(lift (M N) ((array-type (array-type float M) N))
  (lambda (xs) (map (lambda (r) (reduce + 0.0f r)) xs)))";

/// `lift explore --size` lists the variants `lift tune` searches at those sizes (validated
/// with them built in) and says so; without sizes it validates generically and says that.
#[test]
fn known_sizes_explore_validates_as_tune_does() {
    let s = scratch("explore");
    let prog = write_program(&s.0, "row_sums", ROW_SUMS);
    let with = lift(&["explore", &prog, "--size", "M=8", "--size", "N=4096", "--top", "64"]);
    assert!(with.status.success(), "{}", text(&with.stderr));
    let with = text(&with.stdout);
    assert!(
        with.starts_with("validated with the sizes built in: M=8,N=4096"),
        "{with}"
    );
    assert!(
        with.contains("reduceSeqUnroll"),
        "no variant unrolled over M/4:\n{with}"
    );
    let without = lift(&["explore", &prog, "--top", "64"]);
    assert!(without.status.success(), "{}", text(&without.stderr));
    let without = text(&without.stdout);
    assert!(without.starts_with("validated generically"), "{without}");
}

fn repo_file(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

fn lift_cached(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .env("LIFT_CACHE_DIR", cache)
        .output()
        .expect("run the lift binary")
}

/// `lift tune` times its best configurations a second time with the sizes as kernel arguments
/// (rows of their own, checked against the interpreter), records which the tuned best is in
/// the tuning cache, and `lift bench` builds the tuned configuration that way: with its sizes
/// as arguments where the cache says so (named in its variant, and equal to the interpreter),
/// built in otherwise; `lift compile --device --emit plan` says which. Skipped without a device.
#[test]
fn known_sizes_tune_times_sizes_as_arguments() {
    let Some(device) = crate::opencl::device() else { return };
    // (one device named for every command: tune, bench and compile agree on it)
    let device = device.unwrap_or_else(|| "0:0".to_string());
    let s = scratch("tune");
    let cache = s.0.join("cache");
    let table = s.0.join("t.json").to_string_lossy().into_owned();
    let prog = repo_file("examples/hl_scale.lisp");
    let mut args = vec![
        "tune",
        &prog,
        "--size",
        "N=4096",
        "--top",
        "2",
        "--repeats",
        "1",
        "--out",
        &table,
    ];
    args.extend(["--devices", &device]);
    let out = lift_cached(&args, &cache);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&table).expect("the table")).expect("JSON");
    let rows = rows.as_array().expect("rows");
    let generic: Vec<_> = rows.iter().filter(|r| r["built_in"] == false).collect();
    assert!(
        !generic.is_empty() && generic.len() <= 2,
        "one or two leaders timed with the sizes as arguments:\n{stdout}"
    );
    for r in &generic {
        assert_eq!(r["check"], "ok", "{r}\n{stdout}");
        assert!(
            r["note"]
                .as_str()
                .is_some_and(|n| n.contains("sizes as kernel arguments")),
            "{r}"
        );
    }
    assert!(
        stdout.contains(", sizes built in,") || stdout.contains(", sizes as kernel arguments,"),
        "tune's report says which the best is:\n{stdout}"
    );
    // the tuned best's entry, built in or not as the cache says
    let path = cache.join("tuning.json");
    let mut tuning: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the tuning cache")).expect("JSON");
    let key = (tuning.as_object().expect("an object").iter())
        .find(|(k, v)| !k.starts_with("measured|") && v.get("source").is_some())
        .map(|(k, _)| k.clone())
        .expect("the tuned best's entry");
    assert!(tuning[&key]["built_in"].is_boolean(), "{}", tuning[&key]);
    for built_in in [false, true] {
        tuning[&key]["built_in"] = serde_json::Value::Bool(built_in);
        std::fs::write(&path, tuning.to_string()).expect("write the cache");
        let mut args = vec!["bench", &prog, "--size", "N=4096", "--repeats", "1", "--check"];
        args.extend(["--device", &device]);
        let out = lift_cached(&args, &cache);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report = text(&out.stdout);
        let variant = report.lines().find(|l| l.starts_with("variant:")).unwrap_or("");
        assert!(variant.contains("(from the tuning cache)"), "{report}");
        assert_eq!(variant.contains("sizes as kernel arguments"), !built_in, "{report}");
        assert!(report.contains("equals the interpreter"), "{report}");
        // `lift compile --emit plan` for the device shows the same choice
        let mut args = vec!["compile", &prog, "--known-size", "N=4096", "--emit", "plan"];
        args.extend(["--device", &device]);
        let out = lift_cached(&args, &cache);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let plan = text(&out.stdout);
        assert_eq!(
            plan.starts_with("tuned configuration: sizes as kernel arguments"),
            !built_in,
            "{plan}"
        );
        assert_eq!(
            plan.contains("sizes built into the kernels: N=4096"),
            built_in,
            "{plan}"
        );
    }
}

/// A 5-point stencil reading its windows with constant indices, and a gather with indices
/// from data.
const STENCIL: &str = "(define (cell w r c) (at r (at c w)))
(lift (H W) ((array-type (array-type float (+ W 2)) (+ H 2)))
  (lambda (g)
    (toGlobal (mapGlb1 (lambda (rows)
      (mapGlb (lambda (w)
        (* 0.2f (+ (+ (cell w 0 1) (cell w 1 0)) (+ (cell w 1 1) (+ (cell w 1 2) (cell w 2 1))))))
        (slide #3 #1 (transpose rows))))
      (slide #3 #1 g)))))";

const GATHER: &str = "(lift (N M) ((array-type float N) (array-type int M))
  (lambda (xs idx) (toGlobal (mapGlb (lambda (i) (at i xs)) idx))))";

/// Rows of `M`, each read at index 7: in range only where `M` is known to exceed 7.
const ROW_AT: &str = "(lift (M N) ((array-type (array-type float M) N))
  (lambda (xs) (toGlobal (mapGlb (lambda (r) (at 7 r)) xs))))";

/// `at` with a constant index known in range carries no run-time check (no `e_flag` argument,
/// no `atomic_max`), generic or with the sizes built in; an index from data keeps its check, as
/// does a constant one where the length is not known; the stencil still equals the
/// interpreter on OpenCL; a constant index out of range of a known length is refused at
/// compile time, at the index.
#[test]
fn known_sizes_constant_indices_in_range_are_not_checked() {
    let s = scratch("at");
    let stencil = write_program(&s.0, "stencil", STENCIL);
    let gather = write_program(&s.0, "gather", GATHER);
    let row_at = write_program(&s.0, "row_at", ROW_AT);
    let cl = |prog: &str, known: &[&str]| {
        let mut args = vec!["compile", prog, "--emit", "cl"];
        for k in known {
            args.extend(["--known-size", k]);
        }
        let out = lift(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let checked = |cl: &str| cl.contains("e_flag") || cl.contains("atomic_max");
    for known in [&[][..], &["H=64", "W=64"][..]] {
        let c = cl(&stencil, known);
        assert!(!checked(&c), "{known:?}:\n{c}");
    }
    assert!(checked(&cl(&gather, &[])), "an index from data keeps its check");
    assert!(checked(&cl(&row_at, &[])), "a row of length M may be shorter than 8");
    assert!(!checked(&cl(&row_at, &["M=8", "N=4"])));
    // out of range where the length is known: a compile-time error at the index
    let out = lift(&["compile", &row_at, "--known-size", "M=7", "--known-size", "N=4"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        crate::mentions(
            &stderr,
            "the index of `at` is 7, out of range for an array of length M = 7"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked") && !stderr.contains("internal"), "{stderr}");
    assert!(stderr.contains("(at 7 r)"), "{stderr}");
    // on OpenCL the stencil still equals the interpreter
    let Some(device) = crate::opencl::device() else { return };
    let (h, w) = (5usize, 7usize);
    let rows: Vec<String> = (0..h + 2)
        .map(|r| {
            let xs: Vec<String> = (0..w + 2)
                .map(|c| format!("{}", ((r * 5 + c * 3) % 11) as f32 * 0.25))
                .collect();
            format!("[{}]", xs.join(","))
        })
        .collect();
    let data = s.0.join("g.json");
    std::fs::write(&data, format!("{{\"g\":[{}]}}", rows.join(","))).expect("write data");
    let data = data.to_string_lossy().into_owned();
    let mut args = vec!["run", stencil.as_str(), "--data", data.as_str()];
    if let Some(d) = &device {
        args.extend(["--device", d]);
    }
    let got = lift(&args);
    assert!(got.status.success(), "{}", text(&got.stderr));
    let want = lift(&["run", &stencil, "--data", &data, "--backend", "interp"]);
    assert!(want.status.success(), "{}", text(&want.stderr));
    assert!(
        crate::json_close(
            &crate::parse_json(&text(&want.stdout), "the interpreter's result"),
            &crate::parse_json(&text(&got.stdout), "OpenCL's result")
        ),
        "{}\n{}",
        text(&got.stdout),
        text(&want.stdout)
    );
}
