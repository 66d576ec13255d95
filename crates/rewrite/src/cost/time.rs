//! The cost model's estimate as a time: milliseconds on an H200-class device, beside the cost
//! units that rank a program's variants.
//!
//! The cost units (`super`) rank the variants of one program well, but are not a time across
//! programs: an element-wise kernel's cost is mostly its writes at `MEM` an element, about 17
//! times what the H200 spends on them, and a whole-array reduction's cost leaves out the
//! reading of its input, which is all of its time. Here a variant's kernels (`Kernels`: each
//! parallel map, `toGlobal`, scan or filter at host level) read the program's inputs, write its
//! result and write and read back each intermediate result, at least, at the device's
//! bandwidth; what the cost charges beyond their launches and one write an element they write
//! (`Kernels::work`: the arithmetic, the reduction trees, the barriers, the look-back and
//! tickets, the local memory and the traffic of the mapping beyond that least traffic) runs at
//! `MS_PER_UNIT`. The variant is bound by the slower of the two (a roofline), after its
//! launches:
//!
//! `ms = LAUNCH_MS · kernels + max(bytes / BYTES_PER_MS, MS_PER_UNIT · work)`.
//!
//! The variants of a program keep the cost's order (`ordered`: a variant is estimated no faster
//! than a cheaper one), so the choice of variant stays the cost's, and the relative weights of
//! the cost's terms stay those fitted to the order of the measured variants of each kind.
//!
//! `BYTES_PER_MS` and `MS_PER_UNIT` were fitted with `scripts/cost-vs-measured.py --fit` to two
//! thirds of the H200's `lift bench --json` results under `bench/results/raw/` and checked on
//! the other third (`bench/results/cost-model-2026-12-02.md`: the method, the held-out check
//! and the table).

use super::{LAUNCH, MEM};
use ir::types::{Scalar, Type};
use std::collections::BTreeMap;

/// A kernel's launch in device time, in milliseconds: not fitted, the H200's shortest kernels
/// (`bench/results/raw/nvidia-h200-2026-11-24.raw.txt`: gemv T's second kernel over 8192 floats
/// 0.0043 ms, atax's third 0.0037).
pub const LAUNCH_MS: f64 = 0.004;
/// Device memory bandwidth of the measured kernels, in bytes per millisecond (3.31 TB/s; the
/// copies of the same runs moved 537 MB in 0.133 ms, 4.0 TB/s).
pub const BYTES_PER_MS: f64 = 3.31e9;
/// Milliseconds per cost unit of work beyond the least traffic (about 1.5 ns: the unit is
/// a scalar operation of a wave of `Options::lanes` work-items).
pub const MS_PER_UNIT: f64 = 1.54e-6;

/// Bytes of a value of type `t` at the given sizes (unknown sizes at `default`): array lengths
/// times their elements' bytes. A filter's result (an existential array) hides its length and
/// a function is no data: both count nothing.
pub fn type_bytes(t: &Type, sizes: &BTreeMap<String, i64>, default: i64) -> f64 {
    match t {
        Type::Scalar(s) => scalar_bytes(*s),
        Type::Vector(s, w) => scalar_bytes(*s) * f64::from(*w),
        Type::Tuple(ts) => ts.iter().map(|t| type_bytes(t, sizes, default)).sum(),
        Type::Array(e, n) => {
            let n = crate::sizes::estimate(n, sizes, default).unwrap_or(default).max(0) as f64;
            n * type_bytes(e, sizes, default)
        }
        Type::Exists(_) | Type::Fun(..) => 0.0,
    }
}

fn scalar_bytes(s: Scalar) -> f64 {
    s.size_bytes() as f64
}

/// Scalars in a value of type `t` (the elements the cost model charges `MEM` to write).
fn type_scalars(t: &Type, sizes: &BTreeMap<String, i64>, default: i64) -> f64 {
    match t {
        Type::Scalar(_) => 1.0,
        Type::Vector(_, w) => f64::from(*w),
        Type::Tuple(ts) => ts.iter().map(|t| type_scalars(t, sizes, default)).sum(),
        Type::Array(e, n) => {
            let n = crate::sizes::estimate(n, sizes, default).unwrap_or(default).max(0) as f64;
            n * type_scalars(e, sizes, default)
        }
        Type::Exists(_) | Type::Fun(..) => 0.0,
    }
}

/// The kernels of a variant (its low-level program): how many, the bytes they move at least
/// (the program's inputs read, its result written, and each intermediate result written and
/// read back) and the scalars they write (what the cost charges `MEM` each).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Kernels {
    pub count: f64,
    pub bytes: f64,
    pub written: f64,
}

impl Kernels {
    /// The kernels of `prog`, typed by `info`: each global or work-group map, `toGlobal`, scan
    /// or filter at host level (outside every kernel) is one, as `lower` emits them.
    pub fn of(prog: &ir::Program, info: &typeck::TypeInfo, sizes: &BTreeMap<String, i64>, default: i64) -> Kernels {
        let mut walk = Walk {
            prog,
            info,
            sizes,
            default,
            count: 0.0,
            written_bytes: 0.0,
            written: 0.0,
        };
        walk.host(prog.body);
        let inputs: f64 = prog
            .params
            .iter()
            .map(|p| type_bytes(info.var_ty(p.var), sizes, default))
            .sum();
        let result = type_bytes(info.result(), sizes, default);
        Kernels {
            count: walk.count,
            bytes: inputs + result + 2.0 * (walk.written_bytes - result).max(0.0),
            written: walk.written,
        }
    }

    /// What the cost `cost` charges beyond the kernels' launches and one write of each element
    /// they write: the arithmetic, trees, barriers, local memory and the mapping's extra traffic.
    pub fn work(&self, cost: f64) -> f64 {
        (cost - LAUNCH * self.count - self.written * MEM).max(0.0)
    }

    /// The estimated time of a variant of cost `cost` with these kernels, in milliseconds,
    /// before the order of the program's variants is imposed (`ordered`).
    pub fn ms(&self, cost: f64) -> f64 {
        LAUNCH_MS * self.count.max(1.0) + (self.bytes / BYTES_PER_MS).max(MS_PER_UNIT * self.work(cost))
    }
}

/// The estimates of a program's variants given in the order of their costs (cheapest first),
/// made non-decreasing: a variant is estimated no faster than a cheaper one, so the estimate
/// orders the variants as the cost does (where the kernels' traffic alone would order two
/// differently, the cost's order, fitted to the measured order within each kind, stands).
pub fn ordered(ms: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut last = 0.0f64;
    ms.into_iter()
        .map(|m| {
            last = last.max(m);
            last
        })
        .collect()
}

/// Whether a primitive at host level is a kernel (the view primitives around kernels are not).
fn starts_kernel(p: &ir::Prim) -> bool {
    use ir::Prim;
    match p {
        Prim::Map(k) => match k {
            ir::MapKind::Glb(_) | ir::MapKind::Wrg(_) => true,
            ir::MapKind::Plain | ir::MapKind::Lcl(_) | ir::MapKind::Seq | ir::MapKind::SeqUnroll | ir::MapKind::Vec => {
                false
            }
        },
        Prim::To(a) => match a {
            ir::AddressSpace::Global => true,
            ir::AddressSpace::Local | ir::AddressSpace::Private => false,
        },
        Prim::Scan(_) | Prim::Filter(_) => true,
        Prim::Reduce(_)
        | Prim::Zip
        | Prim::Split(_)
        | Prim::Join
        | Prim::Transpose
        | Prim::Slide(..)
        | Prim::Pad(..)
        | Prim::PadClamp(..)
        | Prim::ReorderStride(_)
        | Prim::Reverse
        | Prim::Generate(_)
        | Prim::Iterate(_)
        | Prim::IterateUntil(_)
        | Prim::AsVector(_)
        | Prim::AsScalar => false,
    }
}

struct Walk<'a> {
    prog: &'a ir::Program,
    info: &'a typeck::TypeInfo,
    sizes: &'a BTreeMap<String, i64>,
    default: i64,
    count: f64,
    written_bytes: f64,
    written: f64,
}

impl Walk<'_> {
    fn host(&mut self, id: ir::ExprId) {
        match self.prog.expr(id) {
            ir::Expr::Prim { prim, .. } if starts_kernel(prim) => {
                let t = self.info.ty(id);
                self.count += 1.0;
                self.written_bytes += type_bytes(t, self.sizes, self.default);
                self.written += type_scalars(t, self.sizes, self.default);
            }
            _ => {
                for c in self.prog.children(id) {
                    self.host(c);
                }
            }
        }
    }
}
