//! Matrix products on TF32 tensor cores (`--precision tf32`): the tensor-core variant
//! (`mma-block-*`) is chosen only for a device of compute capability 8.0 or later at sizes its
//! tiles divide; its kernel, compiled for a pretend NVIDIA device of compute capability 9.0,
//! is a snapshot (the inline PTX of `mma.sync`); and the variant as a
//! program (its tile products generated per element where no tensor core is) equals the
//! interpreter on OpenCL.

use crate::{interp_options, json_close, parse_json};

const MM: &str = include_str!("../../../../bench/cgo17/mm.lisp");
const MM_NT: &str = include_str!("../../../../bench/indep/mm_nt.lisp");
const MM_TN: &str = include_str!("../../../../bench/indep/mm_tn.lisp");
const BMM: &str = include_str!("../../../../bench/indep/bmm.lisp");

/// `lift run --precision tf32` on an NVIDIA device of compute capability 9.0 (an H200), at
/// these sizes, as a pipeline's options.
fn tf32_on_cc90(sizes: &[(&str, i64)]) -> lift::Options {
    lift::Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        specialise: true,
        precision: lift::Precision::Tf32,
        compute_capability: Some((9, 0)),
        ..lift::Options::default()
    }
}

fn compiled(src: &str, opts: &lift::Options) -> lift::Compiled {
    lift::compile(src, opts).unwrap_or_else(|e| panic!("{}", e.message()))
}

fn description(c: &lift::Compiled) -> String {
    c.variant.as_ref().map(|v| v.description.clone()).unwrap_or_default()
}

#[test]
fn tf32_on_tensor_cores_emits_mma_fragments_for_mm() {
    let sizes = [("M", 256), ("K", 64), ("N", 256)];
    let c = compiled(MM, &tf32_on_cc90(&sizes));
    assert!(description(&c).contains("mmablock"), "{}", description(&c));
    let cl = c.text(lift::Emit::Cl).expect("cl");
    assert!(
        cl.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
        "{cl}"
    );
    // the staged operands are stored as they are, the tensor cores truncating them to TF32
    assert!(!cl.contains("cvt."), "{cl}");
    insta::assert_snapshot!("cl@tf32_mm_cc90.lisp", cl);
    let plan = c.text(lift::Emit::Plan).expect("plan");
    assert!(plan.contains("tensor cores"), "{plan}");
    // mm_nt: both operands along K
    let nt = compiled(MM_NT, &tf32_on_cc90(&sizes));
    let cl = nt.text(lift::Emit::Cl).expect("cl");
    assert!(cl.contains("mma.sync.aligned.m16n8k8"), "{}\n{cl}", description(&nt));
    insta::assert_snapshot!("cl@tf32_mm_nt_cc90.lisp", cl);
    // mm_tn: both operands along M and N (staged M-major, read by scalars)
    let tn = compiled(MM_TN, &tf32_on_cc90(&sizes));
    let cl = tn.text(lift::Emit::Cl).expect("cl");
    assert!(cl.contains("mma.sync.aligned.m16n8k8"), "{}\n{cl}", description(&tn));
    insta::assert_snapshot!("cl@tf32_mm_tn_cc90.lisp", cl);
    // bmm: a batch of 128 × 128 products, the batch the third dimension of the grid
    let batch = compiled(BMM, &tf32_on_cc90(&[("B", 2), ("M", 128), ("K", 32), ("N", 128)]));
    let cl = batch.text(lift::Emit::Cl).expect("cl");
    assert!(description(&batch).contains("mapWrg2"), "{}", description(&batch));
    assert!(cl.contains("mma.sync.aligned.m16n8k8"), "{}\n{cl}", description(&batch));
    insta::assert_snapshot!("cl@tf32_bmm_cc90.lisp", cl);
}

#[test]
fn tensor_cores_need_tf32_a_capable_device_and_dividing_tiles() {
    let sizes = [("M", 256), ("K", 64), ("N", 256)];
    let no_mma = |opts: &lift::Options, why: &str| {
        let c = compiled(MM, opts);
        let cl = c.text(lift::Emit::Cl).expect("cl");
        assert!(!cl.contains("asm"), "{why}: {}\n{cl}", description(&c));
        assert!(!description(&c).contains("mmablock"), "{why}: {}", description(&c));
    };
    let f32 = lift::Options {
        precision: lift::Precision::F32,
        ..tf32_on_cc90(&sizes)
    };
    no_mma(&f32, "f32");
    let ampere_before = lift::Options {
        compute_capability: Some((7, 5)),
        ..tf32_on_cc90(&sizes)
    };
    no_mma(&ampere_before, "compute capability 7.5");
    let not_nvidia = lift::Options {
        compute_capability: None,
        ..tf32_on_cc90(&sizes)
    };
    no_mma(&not_nvidia, "no compute capability");
    // 200 rows: the 128-row tiles do not divide them; K = 40 is no multiple of 32
    no_mma(&tf32_on_cc90(&[("M", 200), ("K", 64), ("N", 256)]), "M = 200");
    no_mma(&tf32_on_cc90(&[("M", 256), ("K", 40), ("N", 256)]), "K = 40");
}

/// An array of small integers of these dimensions as JSON (their products and sums are exact
/// in TF32 and f32).
fn ints(dims: &[usize], r: &mut ir::rng::XorShift) -> String {
    match dims {
        [] => format!("{}", r.below(9) as f64 - 4.0),
        [n, rest @ ..] => {
            let xs: Vec<String> = (0..*n).map(|_| ints(rest, r)).collect();
            format!("[{}]", xs.join(", "))
        }
    }
}

/// The tensor-core variant's program compiled for a device without tensor cores (its tile
/// products then computed element by element) equals the interpreter: the variant means the
/// product, whatever computes its tiles (`mm`, `mm_tn`, and `bmm` with its batch).
/// A case: its name, source, sizes and its two parameters' names and shapes.
type Case = (
    &'static str,
    &'static str,
    Vec<(&'static str, i64)>,
    [(&'static str, Vec<usize>); 2],
);

#[test]
fn the_tensor_core_variant_as_a_program_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let (m, k, n) = (256, 64, 128);
    let cases: [Case; 3] = [
        (
            "mm",
            MM,
            vec![("M", m), ("K", k), ("N", n)],
            [("a", vec![256, 64]), ("b", vec![64, 128])],
        ),
        (
            "mm_tn",
            MM_TN,
            vec![("M", m), ("K", k), ("N", n)],
            [("at", vec![64, 256]), ("b", vec![64, 128])],
        ),
        (
            "bmm",
            BMM,
            vec![("B", 2), ("M", 128), ("K", 32), ("N", 128)],
            [("as", vec![2, 128, 32]), ("bs", vec![2, 32, 128])],
        ),
    ];
    let mut r = ir::rng::XorShift::new(7);
    for (name, src, sizes, params) in cases {
        let variant = compiled(src, &tf32_on_cc90(&sizes));
        assert!(
            description(&variant).contains("mmablock"),
            "{name}: {}",
            description(&variant)
        );
        let source = variant.variant.as_ref().expect("a variant").source.clone();
        let c = compiled(
            &source,
            &lift::Options {
                as_written: true,
                sizes: sizes.iter().map(|(s, v)| (s.to_string(), *v)).collect(),
                specialise: true,
                ..lift::Options::default()
            },
        );
        let fields: Vec<String> = params
            .iter()
            .map(|(p, dims)| format!("\"{p}\": {}", ints(dims, &mut r)))
            .collect();
        let json = format!("{{{}}}", fields.join(", "));
        let data = vec![lift::data::DataSource::Json(json, format!("{name}.json"))];
        let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
        let opts = lift::RunOptions {
            device: device.clone(),
            time: false,
            interp: false,
        };
        let got = lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        let given = compiled(src, &lift::Options::types_only());
        let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
        let (want, got) = (
            parse_json(&want.json, "the interpreter's result"),
            parse_json(&got.json, "the OpenCL result"),
        );
        assert!(
            json_close(&want, &got),
            "{name}: the variant differs from the interpreter"
        );
    }
}
