//! The cost model's estimate as a time: milliseconds on an H200-class device, beside the cost
//! units that rank a program's variants.
//!
//! The cost units (`super`) rank the variants of one program well, but are not a time across
//! programs: an element-wise kernel's cost is mostly its writes at `MEM` an element, about 17
//! times what the H200 spends on them, and a whole-array reduction's cost leaves out the
//! reading of its input, which is all of its time. Every variant of a program reads its inputs
//! and writes its result at least once (`Traffic::bytes`), at the device's bandwidth; what the
//! cost charges beyond one launch and one write an output element (`Traffic::work`: the
//! arithmetic, the reduction trees, the barriers, the look-back and tickets, the local memory
//! and the traffic beyond the compulsory one of the variant's mapping) runs at `MS_PER_UNIT`. A
//! kernel is bound by the slower of the two (a roofline), after its launch:
//!
//! `ms = LAUNCH_MS + max(bytes / BYTES_PER_MS, MS_PER_UNIT · work)`.
//!
//! It is a non-decreasing function of the cost for the variants of one program (the bytes and
//! the outputs are the program's, not the variant's), so it orders them as the cost does: the
//! choice of variant stays the cost's, and the relative weights of the cost's terms stay those
//! fitted to the order of the measured variants of each kind.
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
/// Device memory bandwidth of the measured kernels, in bytes per millisecond (3.3 TB/s; the
/// copies of the same runs moved 537 MB in 0.133 ms, 4.0 TB/s).
pub const BYTES_PER_MS: f64 = 3.26e9;
/// Milliseconds per cost unit of work beyond the compulsory traffic (about 1.5 ns: the unit is
/// a scalar operation of a wave of `Options::lanes` work-items).
pub const MS_PER_UNIT: f64 = 1.48e-6;

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

/// What every variant of a program moves at least: its inputs read and its result written.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    pub bytes: f64,
    /// Scalars of the result.
    pub outputs: f64,
}

impl Traffic {
    /// The traffic of `prog` (typed by `info`) at the given sizes.
    pub fn of(prog: &ir::Program, info: &typeck::TypeInfo, sizes: &BTreeMap<String, i64>, default: i64) -> Traffic {
        let inputs: f64 = prog
            .params
            .iter()
            .map(|p| type_bytes(info.var_ty(p.var), sizes, default))
            .sum();
        Traffic {
            bytes: inputs + type_bytes(info.result(), sizes, default),
            outputs: type_scalars(info.result(), sizes, default),
        }
    }

    /// What the cost `cost` charges beyond one launch and one write of each output element.
    pub fn work(&self, cost: f64) -> f64 {
        (cost - LAUNCH - self.outputs * MEM).max(0.0)
    }

    /// The estimated time of a variant of cost `cost`, in milliseconds (module docs).
    pub fn ms(&self, cost: f64) -> f64 {
        LAUNCH_MS + (self.bytes / BYTES_PER_MS).max(MS_PER_UNIT * self.work(cost))
    }
}
