//! Sizes built into the kernels (`lift::Options::specialise`, `EmitOptions::known_sizes`):
//! one program at two sizes gives two kernels that name no size, each equal to the
//! interpreter on OpenCL; a plan built for one size refuses another; the specialised kernel
//! of k-means (points as rows) at the suite's size; md's reduction over a neighbour row four
//! neighbours an iteration where its length is built in and a multiple of 4; whole vectors read
//! from global memory at places the sizes make vector-aligned as one aligned vector load.

use crate::rows_layouts::{kmeans_data, kmeans_rows, Scratch};
use crate::{check_all, json_close, parse_json};
use std::collections::BTreeMap;

fn sized(sizes: &[(&str, i64)]) -> BTreeMap<String, i64> {
    sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The cost model's best variant at `sizes`, with the sizes built in.
fn specialised(src: &str, sizes: &[(&str, i64)]) -> lift::Compiled {
    let opts = lift::Options {
        sizes: sized(sizes),
        specialise: true,
        ..lift::Options::default()
    };
    lift::compile(src, &opts).unwrap_or_else(|e| panic!("{}", e.message()))
}

#[test]
fn specialised_two_sizes_give_two_kernels_that_equal_the_interpreter() {
    let device = crate::opencl::device();
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-rows2-{}", std::process::id())));
    let src = kmeans_rows();
    let cases: &[(&str, usize, usize, usize)] = &[("P=256 F=9 C=3", 256, 9, 3), ("P=512 F=34 C=5", 512, 34, 5)];
    let mut kernels = vec![];
    check_all(
        cases,
        |(label, ..)| label,
        |&(label, p, f, c)| {
            let sizes = [("P", p as i64), ("F", f as i64), ("C", c as i64)];
            let compiled = specialised(&src, &sizes);
            let plan = compiled.plan.as_ref().ok_or("no kernels")?;
            // no kernel takes or names a size: every index and bound is a constant
            for s in ["v_P", "v_F", "v_C"] {
                if plan.source.contains(s) {
                    return Err(format!("{label}: the kernel still names {s}:\n{}", plan.source));
                }
            }
            if plan
                .kernels
                .iter()
                .any(|k| k.args.iter().any(|a| matches!(a, codegen_opencl::KernelArg::Size(_))))
            {
                return Err(format!("{label}: a kernel takes a size argument"));
            }
            let described = plan.describe();
            let line = format!("sizes built into the kernels: {label}");
            if !described.contains(&line) {
                return Err(format!("{label}: the plan does not say `{line}`:\n{described}"));
            }
            let Some(device) = &device else { return Ok(()) };
            let data = vec![kmeans_data(&scratch.0, p, f, c)];
            let want = lift::run_files(&src, &data, &[], &crate::interp_options())
                .map_err(|e| format!("interpreter: {}", e.message()))?;
            let sources = lift::read_sources(&data).map_err(|e| e.message())?;
            let inputs = lift::data::load(&compiled.given, &sources, &[]).map_err(|e| e.message)?;
            let opts = lift::RunOptions {
                device: device.clone(),
                time: false,
                interp: false,
            };
            let got = lift::run_compiled(&compiled, &inputs, &opts)
                .map_err(|e| format!("{label} fails on OpenCL: {}", e.message()))?;
            if !json_close(
                &parse_json(&want.json, "the interpreter's result"),
                &parse_json(&got.json, "OpenCL's"),
            ) {
                return Err(format!("{label}: differs from the interpreter:\n{}", plan.source));
            }
            Ok(())
        },
    );
    for &(_, p, f, c) in cases {
        let sizes = [("P", p as i64), ("F", f as i64), ("C", c as i64)];
        kernels.push(specialised(&src, &sizes).plan.expect("kernels").source);
    }
    assert_ne!(kernels[0], kernels[1], "two sizes, one kernel");
}

/// A plan built for F=9 run on inputs of F=34 is our bug, refused before anything runs.
#[test]
fn specialised_a_plan_built_for_one_size_refuses_another() {
    let Some(device) = crate::opencl::device() else { return };
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-rows2-other-{}", std::process::id())));
    let compiled = specialised(&kmeans_rows(), &[("P", 256), ("F", 9), ("C", 3)]);
    let data = vec![kmeans_data(&scratch.0, 256, 34, 3)];
    let sources = lift::read_sources(&data).unwrap_or_else(|e| panic!("{}", e.message()));
    let inputs = lift::data::load(&compiled.given, &sources, &[]).unwrap_or_else(|e| panic!("{}", e.message));
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let e = match lift::run_compiled(&compiled, &inputs, &opts) {
        Ok(_) => panic!("kernels built for F=9 ran at F=34"),
        Err(e) => e.message(),
    };
    assert!(e.contains("built for F=9") && e.contains("F=34"), "{e}");
}

/// `lift compile` without sizes keeps every size a kernel argument; with `--known-size` the
/// kernels take none.
#[test]
fn specialised_compile_builds_in_only_the_sizes_it_is_given() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cgo17/kmeans_rows.lisp");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
            .arg("compile")
            .arg(&path)
            .args(extra)
            .output()
            .expect("runs lift");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let generic = run(&[]);
    assert!(
        generic.contains("int v_F") && !generic.contains("sizes built into"),
        "{generic}"
    );
    let known = run(&["--known-size", "F=34", "--known-size", "C=5"]);
    assert!(!known.contains("int v_F") && !known.contains("int v_C"), "{known}");
    // a block of 128 rows of 34 floats starts at a multiple of 4 floats: one aligned float4
    // load, where `vload4` promises only a float's alignment
    assert!(
        known.contains("((const global float4*)v_points)[") && !known.contains("vload4"),
        "{known}"
    );
    assert!(known.contains("sizes built into the kernels: F=34 C=5"), "{known}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("compile")
        .arg(&path)
        .args(["--known-size", "Q=3"])
        .output()
        .expect("runs lift");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no size variable `Q`"));
}

/// The kernel of the cost model's best variant of k-means (points as rows) at the suite's
/// size, the sizes built in.
#[test]
fn specialised_kernel_kmeans_rows() {
    let compiled = specialised(&kmeans_rows(), &[("P", 819_200), ("F", 34), ("C", 5)]);
    let cl = compiled
        .text(lift::Emit::Cl)
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let plan = compiled
        .text(lift::Emit::Plan)
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let description = compiled
        .variant
        .as_ref()
        .map_or("as written", |v| v.description.as_str());
    insta::with_settings!({
        snapshot_suffix => "kmeans_rows_P=819200_F=34_C=5",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "bench/cgo17/kmeans_rows.lisp compiled with the sizes P=819200 F=34 C=5 built in",
    }, {
        insta::assert_snapshot!("specialised", format!(";; {description}\n{cl}/* launch plan\n{plan}*/\n"));
    });
}

fn md_rows() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cgo17/md_rows.lisp");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Particles on a small integer grid and neighbour lists of other particles: every force is
/// computed from exact differences, so only the summation order could differ.
fn md_data(dir: &std::path::Path, n: usize, m: usize) -> String {
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |k: u64| {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (s >> 33) % k
    };
    let particles: Vec<serde_json::Value> = (0..n)
        .map(|_| serde_json::json!([next(12) as f64, next(12) as f64, next(12) as f64, 0.0]))
        .collect();
    let neighbours: Vec<serde_json::Value> = (0..n)
        .map(|i| (0..m).map(|_| (i + 1 + next(n as u64 - 1) as usize) % n).collect())
        .collect();
    let data = serde_json::json!({
        "particles": particles, "neighbours": neighbours, "cutsq": 16.0, "lj1": 1.5, "lj2": 2.0
    });
    std::fs::create_dir_all(dir).expect("a scratch folder");
    let path = dir.join(format!("md_{n}_{m}.json"));
    std::fs::write(&path, data.to_string()).expect("writes data");
    path.to_string_lossy().into_owned()
}

/// md (neighbours as rows): with the row length built in and a multiple of 4, each iteration
/// of the reduction over a neighbour row takes four neighbours (four gathers issued at once);
/// with a length that is not, one. Both equal the interpreter on OpenCL.
#[test]
fn specialised_md_rows_takes_four_neighbours_an_iteration() {
    let device = crate::opencl::device();
    let scratch = Scratch(std::env::temp_dir().join(format!("lift-it-rows2-md-{}", std::process::id())));
    let src = md_rows();
    let cases: &[(&str, usize, usize, bool)] = &[("N=128 M=12", 128, 12, true), ("N=128 M=6", 128, 6, false)];
    check_all(
        cases,
        |(label, ..)| label,
        |&(label, n, m, four)| {
            let compiled = specialised(&src, &[("N", n as i64), ("M", m as i64)]);
            let plan = compiled.plan.as_ref().ok_or("no kernels")?;
            let quarter = format!("v_i_1 < {};", m / 4);
            let whole = format!("v_i_1 < {m};");
            let ok = if four {
                plan.source.contains(&quarter) && plan.source.contains("4 * v_i_1") && !plan.source.contains(&whole)
            } else {
                plan.source.contains(&whole)
            };
            if !ok {
                return Err(format!("{label}: not the loop expected:\n{}", plan.source));
            }
            let Some(device) = &device else { return Ok(()) };
            let data = vec![md_data(&scratch.0, n, m)];
            let want = lift::run_files(&src, &data, &[], &crate::interp_options())
                .map_err(|e| format!("interpreter: {}", e.message()))?;
            let sources = lift::read_sources(&data).map_err(|e| e.message())?;
            let inputs = lift::data::load(&compiled.given, &sources, &[]).map_err(|e| e.message)?;
            let opts = lift::RunOptions {
                device: device.clone(),
                time: false,
                interp: false,
            };
            let got = lift::run_compiled(&compiled, &inputs, &opts)
                .map_err(|e| format!("{label} fails on OpenCL: {}", e.message()))?;
            if !json_close(
                &parse_json(&want.json, "the interpreter's result"),
                &parse_json(&got.json, "OpenCL's"),
            ) {
                return Err(format!("{label}: differs from the interpreter:\n{}", plan.source));
            }
            Ok(())
        },
    );
}

/// The kernel of the cost model's best variant of md (neighbours as rows) at the suite's size,
/// the sizes built in: four neighbours an iteration.
#[test]
fn specialised_kernel_md_rows() {
    let compiled = specialised(&md_rows(), &[("N", 73_728), ("M", 128)]);
    let cl = compiled
        .text(lift::Emit::Cl)
        .unwrap_or_else(|e| panic!("{}", e.message()));
    let description = compiled
        .variant
        .as_ref()
        .map_or("as written", |v| v.description.as_str());
    insta::with_settings!({
        snapshot_suffix => "md_rows_N=73728_M=128",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "bench/cgo17/md_rows.lisp compiled with the sizes N=73728 M=128 built in",
    }, {
        insta::assert_snapshot!("specialised", format!(";; {description}\n{cl}"));
    });
}
