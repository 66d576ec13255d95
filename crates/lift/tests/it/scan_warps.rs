//! Scans of 4-byte scalars (`gen/scan/striped.rs`): on an NVIDIA device of compute capability
//! 7.0 or later the warps exchange totals through PTX shuffles and ballots (the kernels,
//! compiled for a pretend H200, are snapshots); elsewhere the same algorithm exchanges them
//! through local memory and no `asm` is emitted; wider values keep the tiles of `glb.rs`.

fn options(cc: Option<(u32, u32)>, sizes: &[(&str, i64)]) -> lift::Options {
    lift::Options {
        sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        specialise: true,
        compute_capability: cc,
        ..lift::Options::default()
    }
}

fn cl(src: &str, opts: &lift::Options) -> String {
    let c = lift::compile(src, opts).unwrap_or_else(|e| panic!("{}", e.message()));
    c.text(lift::Emit::Cl).expect("cl")
}

const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) (scan + 0.0f xs)))";
const ROWS: &str =
    "(lift (N M) ((array-type (array-type float M) N)) (lambda (m) (map (lambda (r) (scan + 0.0f r)) m)))";
const INTS: &str =
    "(lift (N) ((array-type int N)) (lambda (xs) (map (lambda (x) (* 2 x)) (scan + 0 (map (lambda (x) (+ x 1)) xs)))))";

#[test]
fn scans_on_an_nvidia_device_exchange_through_warp_shuffles() {
    let h200 = Some((9, 0));
    let sum = cl(SUM, &options(h200, &[("N", 1 << 20)]));
    for needle in [
        "shfl.sync.up.b32",
        "shfl.sync.down.b32",
        "vote.sync.ballot.b32",
        "asm volatile",
        "float4",
    ] {
        assert!(sum.contains(needle), "{needle}:\n{sum}");
    }
    insta::assert_snapshot!("cl@scan_sum_cc90.lisp", sum);
    let rows = cl(ROWS, &options(h200, &[("N", 64), ("M", 8192)]));
    assert!(rows.contains("shfl.sync.up.b32"), "{rows}");
    insta::assert_snapshot!("cl@scan_rows_cc90.lisp", rows);
    // maps before and after an int scan are applied lane by lane around whole vectors
    let ints = cl(INTS, &options(h200, &[("N", 1 << 20)]));
    assert!(ints.contains("int4") && ints.contains("shfl.sync.up.b32"), "{ints}");
}

#[test]
fn scans_elsewhere_exchange_through_local_memory() {
    for cc in [None, Some((6, 1))] {
        let sum = cl(SUM, &options(cc, &[("N", 1 << 20)]));
        assert!(!sum.contains("asm"), "{cc:?}:\n{sum}");
        assert!(sum.contains("v_xch_1"), "{cc:?}:\n{sum}");
    }
    // doubles: the tiles of `glb.rs`, with no warp exchange on any device
    let doubles = "(lift (N) ((array-type double N)) (lambda (xs) (scan + 0.0d xs)))";
    let d = cl(doubles, &options(Some((9, 0)), &[("N", 1 << 20)]));
    assert!(!d.contains("shfl") && d.contains("lift_tile_load_double"), "{d}");
}
