//! The rows layouts of the suite (`bench/cgo17/kmeans_rows.lisp`): the block of rows a
//! work-group stages in local memory copied as float4 (`stage-rows-vec`), at row lengths that
//! are not a multiple of 4 (a vector then spans two rows), on OpenCL against the interpreter,
//! and the kernel of the cost model's best variant at the suite's size.

use crate::{check_all, json_close, parse_json};
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) fn kmeans_rows() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cgo17/kmeans_rows.lisp");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The variants `rewrite::explore` keeps for `src` at `sizes`: (description, source).
fn variants(src: &str, sizes: &[(&str, i64)], top: usize) -> Vec<(String, String)> {
    let c = lift::compile(src, &lift::Options::types_only()).unwrap_or_else(|e| panic!("{}", e.message()));
    let opts = rewrite::Options {
        sizes: sizes
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<BTreeMap<_, _>>(),
        top_k: top,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&c.given, &c.given_info, &opts).unwrap_or_else(|e| panic!("{}", e.message));
    ex.variants.into_iter().map(|v| (v.description, v.source)).collect()
}

/// Points and centres of multiples of 1/4 in [-2, 2]: every squared distance is exact in
/// float32, so the device's order of summation cannot change which centre is nearest.
pub(crate) fn kmeans_data(dir: &Path, p: usize, f: usize, c: usize) -> String {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((s >> 33) % 17) as f64 / 4.0 - 2.0
    };
    let mut rows = |n: usize| -> serde_json::Value {
        (0..n)
            .map(|_| (0..f).map(|_| serde_json::json!(next())).collect::<serde_json::Value>())
            .collect()
    };
    let data = serde_json::json!({ "points": rows(p), "centres": rows(c) });
    std::fs::create_dir_all(dir).expect("a scratch folder");
    let path = dir.join(format!("kmeans_{p}_{f}_{c}.json"));
    std::fs::write(&path, data.to_string()).expect("writes data");
    path.to_string_lossy().into_owned()
}

pub(crate) struct Scratch(pub(crate) std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn rows_vector_staged_kmeans_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-rows-{}", std::process::id())));
    let src = kmeans_rows();
    // 34 features (the suite's: a float4 of the copy spans two rows), 9 (odd), 16 (a multiple
    // of 4: vectors within rows)
    let cases: &[(&str, usize, usize, usize)] = &[
        ("P=512 F=34 C=5", 512, 34, 5),
        ("P=256 F=9 C=3", 256, 9, 3),
        ("P=256 F=16 C=4", 256, 16, 4),
    ];
    check_all(
        cases,
        |(label, ..)| label,
        |&(_, p, f, c)| {
            let data = vec![kmeans_data(&scratch.0, p, f, c)];
            let sizes = [("P", p as i64), ("F", f as i64), ("C", c as i64)];
            let found = variants(&src, &sizes, 16);
            let staged: Vec<&(String, String)> = found
                .iter()
                .filter(|(d, _)| d.contains("rows staged in local memory as float4"))
                .collect();
            if staged.is_empty() {
                return Err(format!("no float4-staged variant among {}", found.len()));
            }
            let want = lift::run_files(&src, &data, &[], &crate::interp_options())
                .map_err(|e| format!("interpreter: {}", e.message()))?;
            let want = parse_json(&want.json, "the interpreter's result");
            for (description, source) in staged {
                if !source.contains("(asVector #4") {
                    return Err(format!("{description}: the copy is not of float4:\n{source}"));
                }
                let compiled = lift::compile(
                    source,
                    &lift::Options {
                        as_written: true,
                        ..lift::Options::default()
                    },
                )
                .map_err(|e| format!("{description}: {}", e.message()))?;
                let sources = lift::read_sources(&data).map_err(|e| e.message())?;
                let inputs = lift::data::load(&compiled.given, &sources, &[]).map_err(|e| e.message)?;
                let got = lift::run_compiled(&compiled, &inputs, &opts)
                    .map_err(|e| format!("{description} fails on OpenCL: {}\n{source}", e.message()))?;
                let got = parse_json(&got.json, "the OpenCL result");
                if !json_close(&want, &got) {
                    return Err(format!("{description} differs from the interpreter:\n{source}"));
                }
            }
            Ok(())
        },
    );
}

/// The cost model's best variant of k-means (points as rows) at the suite's size stages the
/// rows as float4; its kernel.
#[test]
fn rows_best_kernel_kmeans() {
    let sizes = [("P", 819_200), ("F", 34), ("C", 5)];
    let found = variants(&kmeans_rows(), &sizes, 8);
    let (description, source) = found.first().expect("a variant");
    assert!(
        description.contains("mapLcl 128, rows staged in local memory as float4"),
        "the best variant: {description}"
    );
    let compiled = lift::compile(
        source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}", e.message()));
    let cl = compiled
        .text(lift::Emit::Cl)
        .unwrap_or_else(|e| panic!("{}", e.message()));
    assert!(cl.contains("vload4") && cl.contains("vstore4"), "{cl}");
    insta::with_settings!({
        snapshot_suffix => "kmeans_rows_P=819200_F=34_C=5",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "rewrite::explore bench/cgo17/kmeans_rows.lisp at P=819200 F=34 C=5, variant 0, then --emit cl",
    }, {
        insta::assert_snapshot!("cl_rows_best", format!(";; {description}\n{cl}"));
    });
}
