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
