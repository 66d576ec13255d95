//! The tensor-core rules (`mma-block-*`, `mma-block-rows-*`, `batch-mma-block-*`,
//! `rules::tensor`): on four formulations of the matrix product (`C = A B` with `B` transposed
//! by the program, `C = A Btᵀ` written without `join`, `C = Atᵀ B` with both transposed, and a
//! batch of products) they give the tensor-core variant exactly where tensor cores are allowed
//! and a tile (128 × 128 at least, K by 32) divides the known sizes; each such variant
//! validates with the sizes built in, and emits as `mma.sync` fragments for a device of
//! compute capability 8.0 and as an ordinary per-element product for any other.

use rewrite::{explore, Options};
use std::collections::BTreeMap;

const MM: &str = include_str!("../../../bench/cgo17/mm.lisp");
const MM_NT: &str = include_str!("../../../bench/indep/mm_nt.lisp");
const MM_TN: &str = include_str!("../../../bench/indep/mm_tn.lisp");
const BMM: &str = include_str!("../../../bench/indep/bmm.lisp");

fn sizes(m: i64, k: i64, n: i64) -> BTreeMap<String, i64> {
    [("M", m), ("K", k), ("N", n)]
        .iter()
        .map(|(s, v)| (s.to_string(), *v))
        .collect()
}

/// The variants (description, program, types) of `src` at `sizes`.
fn variants(
    src: &str,
    sizes: &BTreeMap<String, i64>,
    tensor_cores: bool,
) -> Vec<(String, ir::Program, typeck::TypeInfo)> {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = Options {
        sizes: sizes.clone(),
        built_in: sizes.clone(),
        top_k: 4,
        tensor_cores,
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).expect("explores");
    ex.variants
        .into_iter()
        .map(|v| (v.description, v.program, v.info))
        .collect()
}

#[test]
fn mma_blocks_are_the_best_variant_where_tensor_cores_are_allowed_and_emit_as_fragments() {
    let mut batch = sizes(128, 32, 128);
    batch.insert("B".into(), 2);
    for (name, src, at) in [
        ("mm", MM, sizes(256, 64, 256)),
        ("mm_nt", MM_NT, sizes(256, 64, 256)),
        ("mm_tn", MM_TN, sizes(256, 64, 256)),
        ("bmm", BMM, batch),
    ] {
        let vs = variants(src, &at, true);
        let (description, program, info) = vs.first().expect("a variant");
        assert!(description.contains("mmablock"), "{name}: {description}");
        assert!(description.contains("on tensor cores"), "{name}: {description}");
        validate::validate_with(program, info, &at).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let emit = |cc| {
            let opts = codegen_opencl::EmitOptions {
                known_sizes: at.clone(),
                precision: ir::Precision::Tf32,
                compute_capability: cc,
                ..codegen_opencl::EmitOptions::default()
            };
            codegen_opencl::emit_with(program, info, &opts)
                .unwrap_or_else(|e| panic!("{name}: {}", e.message))
                .source
        };
        let mma = emit(Some((8, 0)));
        assert!(
            mma.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
            "{name}:\n{mma}"
        );
        let plain = emit(None);
        assert!(!plain.contains("asm"), "{name}:\n{plain}");
    }
}

#[test]
fn mma_blocks_need_tensor_cores_and_tiles_that_divide_the_sizes() {
    for (name, src) in [("mm", MM), ("mm_nt", MM_NT), ("mm_tn", MM_TN)] {
        let none = |sizes: &BTreeMap<String, i64>, tensor_cores: bool, why: &str| {
            for (d, _, _) in variants(src, sizes, tensor_cores) {
                assert!(!d.contains("mmablock"), "{name}, {why}: {d}");
            }
        };
        none(&sizes(256, 64, 256), false, "f32");
        none(&sizes(200, 64, 256), true, "M = 200");
        none(&sizes(256, 64, 136), true, "N = 136");
        none(&sizes(256, 40, 256), true, "K = 40");
        // symbolic sizes: a tile of a length not known is no tensor-core tile
        none(&BTreeMap::new(), true, "no sizes");
    }
    // a batch of 32 × 32 products: no tile of 128 divides them
    let mut small = sizes(32, 32, 32);
    small.insert("B".into(), 64);
    for (d, _, _) in variants(BMM, &small, true) {
        assert!(!d.contains("mmablock"), "bmm 32 × 32: {d}");
    }
}
