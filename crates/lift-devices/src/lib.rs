//! The multi-device planner: several devices for one program (NUDA's `nudevs`): the outermost parallel map of a
//! program is split into contiguous slices of its index range, one per device, each computed in
//! its own host thread with its own OpenCL context and queue (`--devices 0:0,0:0` opens two
//! contexts on one device).
//!
//! The split is decided on the program as given, before any lowering, from how each parameter
//! reaches the outermost map: a parameter that *is* the map's input (or one operand of the
//! `zip` it reads) is read at the map's index and is sliced along its outer dimension; every
//! other parameter is read whole by each iteration (mm's second operand) and is copied whole to
//! every device; a map over layouts of inputs (`slide`, `pad`, `split`, `transpose`, nested, each
//! operand of a `zip` its own) takes the rows or columns its slice of windows or chunks reads
//! ([`Take`]). Each device then compiles
//! and runs the *slice program*: the given program with the sliced parameters' outer length
//! replaced by a fresh size variable, so that the usual pipeline (tuning cache, rewrite,
//! validate, codegen) chooses the variant for the slice and device at hand. The slices follow
//! each device's estimated speed ([`shares`]). The parts are gathered in order:
//!
//! - a map (under any number of `join`s) or a filter: the parts are concatenated (a filter's
//!   parts are existential arrays; their lengths are the parts' lengths);
//! - `reduce op init xs` whose `init` is the identity of `op` (`+` with 0, `*` with 1): one
//!   partial per device, combined by the same reduction on the host;
//! - `let parts = P in F` whose `P` splits into concatenated parts (a lowered reduction's
//!   per-group partial results): each device computes its slice of `P`, and `F` (the final
//!   group) runs on the host on the gathered partials;
//! - anything else runs whole on the first device, and the plan says why.
//!
//! Modules: [`decide`] finds the split on the program as given; [`shares`] sizes each device's
//! slice from its estimated speed; [`run`] compiles and runs the slices and gathers the parts
//! (and runs host loops with the program resident on each device); [`measure`] times each phase
//! of a split run for `lift bench --devices`; [`ranks`] is the same split over MPI ranks, one
//! process and device each (`--mpi`; its transport behind the cargo feature `mpi`).

pub mod decide;
pub mod measure;
pub mod ranks;
pub mod run;
pub mod shares;
#[cfg(test)]
mod tests;

pub use decide::decide;
pub use measure::{measure, Measured, MeasuredDevice, MeasuredRun, PhaseTimes};
pub use run::{describe, host_loop, host_loop_or_why, run, run_files, HostLoop, FAIL_VAR};
pub use shares::{choose, shares, Estimate, Shares, MIN_GAIN_MS, MIN_SHARE};

use lift_compile::Error;
use std::ops::Range;

/// How the parts of the devices are put together.
#[derive(Clone, Debug, PartialEq)]
pub enum Gather {
    /// The parts are consecutive pieces of the result (a map, a join of one, a filter).
    Concat,
    /// One partial result per device (each an array of one element), reduced on the host by
    /// this program (`(lift (P) ([T]P) (lambda (ps) (reduce op init ps)))`).
    Reduce { combine: String },
    /// The parts are consecutive pieces of a `let`-bound value `name` (a lowered reduction's
    /// per-group partial results); `rest`, the given program with `name` as its last
    /// parameter (the final group), makes the result from them on the host.
    Finish { rest: String, name: String },
}

/// What one parameter of a slice program takes from the given program's inputs, for the
/// slice `lo..hi` of the split range.
#[derive(Clone, Debug, PartialEq)]
pub enum Take {
    /// The given parameter whole.
    Whole(usize),
    /// The given parameter `param` or, with `pre`, the array this one-parameter program (a
    /// layout of it: pads, splits, ...) makes of it on the host first, cut along dimension `dim`
    /// (0: its rows; 1: the columns of each row, under a `transpose`): windows `lo..hi` of
    /// `window = (size, step)` read its elements `lo*step .. (hi-1)*step + size` (`(1, 1)`:
    /// `lo..hi`; a `slide`'s slices carry their halo, the `size - step` elements each shares
    /// with the next; `split #k` is windows of k every k).
    Cut {
        param: usize,
        dim: usize,
        window: (usize, usize),
        pre: Option<String>,
    },
}

/// How a program is spread over several devices.
#[derive(Clone, Debug)]
pub struct Split {
    /// The split dimension as the plan shows it, and the fresh size variable of a slice: the
    /// number of the outermost map's elements it computes.
    pub size: String,
    pub part: String,
    /// The length of the split dimension (the outermost map's length), in the program's sizes.
    pub count: arith::ArithExpr,
    /// The slice program's source text.
    pub slice_src: String,
    /// For each parameter of the slice program: what it takes.
    pub params: Vec<Take>,
    /// The given program's parameter names: sliced, and copied whole.
    pub sliced: Vec<String>,
    pub whole: Vec<String>,
    /// How the sliced inputs are cut, for the plan (empty: by rows).
    pub notes: Vec<String>,
    pub gather: Gather,
}

/// The decision for a program: split, or run whole on the first device (with the reason).
#[derive(Clone, Debug)]
pub enum Decision {
    Split(Split),
    Whole(String),
}

/// `--devices`: `gpus` (every GPU), `all` (every device) or comma-separated `P:D` ids / name
/// parts, as `lift devices` lists them. The same device may be named twice (two contexts).
pub fn resolve(spec: &str) -> Result<Vec<String>, Error> {
    let spec = spec.trim();
    let pick = |want_gpu: bool| -> Result<Vec<String>, Error> {
        let devs = host_runner::devices().map_err(|e| Error::plain(format!("--devices {spec}: {e}")))?;
        let ids: Vec<String> = devs
            .iter()
            .filter(|d| !want_gpu || d.kind == host_runner::DeviceKind::Gpu)
            .map(|d| d.id.clone())
            .collect();
        if ids.is_empty() {
            return Err(Error::plain(format!(
                "--devices {spec}: no {} found (see `lift devices`)",
                if want_gpu { "GPU" } else { "OpenCL device" }
            )));
        }
        Ok(ids)
    };
    match spec {
        "gpus" => pick(true),
        "all" => pick(false),
        _ => {
            let ids: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
            if ids.iter().any(String::is_empty) {
                return Err(Error::plain(format!(
                    "--devices {spec}: expected `gpus`, `all` or comma-separated devices such as 0:0,0:1"
                )));
            }
            Ok(ids)
        }
    }
}

/// The contiguous slices of `0..n` in proportion to `weights` (one per device; a device whose
/// share rounds to nothing gets an empty range). Rounding follows the running sum, so the
/// slices always cover `0..n` exactly.
pub fn slices(n: usize, weights: &[f64]) -> Vec<Range<usize>> {
    let total: f64 = weights.iter().map(|w| w.max(0.0)).sum();
    let mut out = Vec::with_capacity(weights.len());
    let mut acc = 0.0;
    let mut lo = 0;
    for (i, w) in weights.iter().enumerate() {
        acc += w.max(0.0);
        let hi = if i + 1 == weights.len() || total <= 0.0 {
            if total <= 0.0 && i + 1 < weights.len() {
                lo
            } else {
                n
            }
        } else {
            ((acc / total) * n as f64).round().clamp(lo as f64, n as f64) as usize
        };
        out.push(lo..hi);
        lo = hi;
    }
    out
}
