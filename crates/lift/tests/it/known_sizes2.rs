//! Follow-ups of kernels built for their sizes (issue 11): `lift explore` validates as `lift
//! tune` measures, the private-memory and unrolling limits count what a kernel really holds,
//! and `at` with an index known in range carries no run-time check.

use crate::rows_layouts::Scratch;
use std::path::Path;
use std::process::{Command, Output};

fn lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .output()
        .expect("run the lift binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> Scratch {
    let s = Scratch(std::env::temp_dir().join(format!("lift-it-known2-{name}-{}", std::process::id())));
    std::fs::create_dir_all(&s.0).expect("scratch dir");
    s
}

fn write_program(dir: &Path, name: &str, src: &str) -> String {
    let path = dir.join(format!("{name}.lisp"));
    std::fs::write(&path, src).expect("write program");
    path.to_string_lossy().into_owned()
}

/// Sums of rows of 8: with the sizes built in, `reduceSeqUnroll` over the `M/4` rows of
/// `transpose (split 4 r)` is legal (`rewrite`'s `built_in_sizes_make_unrolled_variants_legal`).
const ROW_SUMS: &str = "(lift (M N) ((array-type (array-type float M) N))
  (lambda (xs) (map (lambda (r) (reduce + 0.0f r)) xs)))";

/// `lift explore --size` lists the variants `lift tune` searches at those sizes (validated
/// with them built in) and says so; without sizes it validates generically and says that.
#[test]
fn known_sizes2_explore_validates_as_tune_does() {
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
fn known_sizes2_tune_times_sizes_as_arguments() {
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
fn known_sizes2_constant_indices_in_range_are_not_checked() {
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
