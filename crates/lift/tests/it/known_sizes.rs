//! Kernels built for their sizes are validated with them (`validate::validate_with`): a private
//! array, a private accumulator or an unrolled loop whose length a size fixes is refused by
//! `lift compile` (generic kernels) with its span, runs under `lift run` (which builds the
//! kernels for the inputs' sizes) and equals the interpreter; beyond the private-memory and
//! unrolling limits the same run is a clear error at the same place.

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
