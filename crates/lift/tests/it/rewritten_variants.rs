//! Defects that difffuzz's variants mode found in rewritten variants (`difffuzz run
//! --variants K`): each low-level variant as `lift tune` builds it (sizes built in), run on
//! OpenCL and compared with the interpreter.

use crate::{json_close, parse_json};

/// The variant on the interpreter and on OpenCL (sizes built in), as JSON; `None` without a
/// device.
fn both(src: &str, data: &str) -> Option<(serde_json::Value, serde_json::Value)> {
    let device = crate::opencl::device()?;
    let typed = lift::compile(src, &lift::Options::types_only()).unwrap_or_else(|e| panic!("{}", e.message()));
    let sources = [lift::data::DataSource::Json(data.to_string(), "data.json".into())];
    let inputs = lift::data::load(&typed.given, &sources, &[]).unwrap_or_else(|e| panic!("{}", e.message));
    let want =
        lift::run_compiled(&typed, &inputs, &crate::interp_options()).unwrap_or_else(|e| panic!("{}", e.message()));
    let opts = lift::Options {
        sizes: inputs.sizes.clone(),
        specialise: true,
        ..lift::Options::default()
    };
    let compiled = lift::compile(src, &opts).unwrap_or_else(|e| panic!("{}", e.message()));
    let run = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let got = lift::run_compiled(&compiled, &inputs, &run).unwrap_or_else(|e| panic!("{}", e.message()));
    Some((parse_json(&want.json, "interpreter"), parse_json(&got.json, "OpenCL")))
}

/// Seed 33, case 80 on the H200 (a sum's strided partial reduction over a vectorized map): the
/// vectors a `mapGlb` writes through `transpose (split 4 (asScalar …))` land lane by lane
/// `N/4` apart. It was "internal: cannot write through asVector here"; each lane is stored
/// where it goes now.
#[test]
fn variant_vector_writes_scattered_by_a_transpose_are_stored_by_lanes() {
    let src = "(lift (N) ((array-type float N))
  (lambda (xs)
    (let tmp2
      (let k1
        (let tmp0
          (transpose (split #4 (asScalar (toGlobal (mapGlb (lambda (x3) (* 2.0f x3)) (asVector #4 xs))))))
          (toGlobal (mapGlb (lambda (v1) (reduceSeq (lambda (p1 p2) (+ (* 2.0f p1) p2)) 0.0f v1)) tmp0)))
        (join k1))
      (toGlobal (mapSeq (lambda (x) x) tmp2)))))";
    let data = r#"{"xs": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]}"#;
    let Some((want, got)) = both(src, data) else { return };
    assert!(json_close(&want, &got), "interpreter {want}\nOpenCL      {got}");
}

/// Seeds 33 and 34 on the H200: a strided partial sum's chunks of 500 became a `mapWrg` ×
/// `mapLcl` of 500 work-items, whose launch NVIDIA's driver refused ("this kernel allows at
/// most 256"; so were 288, 512, 1000 and 1024, though the device allows 1024). A `mapLcl` longer
/// than 256 now strides over work-groups of at most 256 even where the device allows more.
#[test]
fn variant_a_long_map_lcl_strides_over_at_most_256_work_items() {
    let src = "(lift (N) ((array-type float N))
  (lambda (xs) (join (toGlobal (mapWrg (lambda (c) (mapLcl (lambda (x) (* 2.0f x)) c)) (split #500 xs))))))";
    let opts = lift::Options {
        sizes: [("N".to_string(), 1000)].into_iter().collect(),
        specialise: true,
        work_group_limit: Some(codegen_opencl::WorkGroupLimit::new(1024, &[1024, 1024, 64])),
        ..lift::Options::default()
    };
    let c = lift::compile(src, &opts).unwrap_or_else(|e| panic!("{}", e.message()));
    let plan = c.plan.expect("kernels");
    let groups: Vec<usize> = plan
        .source
        .split("reqd_work_group_size(")
        .skip(1)
        .map(|s| {
            s.split(')')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|n| n.trim().parse::<usize>().unwrap_or(0))
                .product()
        })
        .collect();
    assert!(
        !groups.is_empty() && groups.iter().all(|&g| g <= 256),
        "{groups:?}\n{}",
        plan.source
    );
    let data = format!(
        "{{\"xs\": {:?}}}",
        (0..1000).map(|i| (i % 13) as f64 - 6.0).collect::<Vec<_>>()
    );
    let Some((want, got)) = both(src, &data) else { return };
    assert!(json_close(&want, &got), "interpreter {want}\nOpenCL      {got}");
}
