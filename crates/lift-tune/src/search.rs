//! The search's options, budget and constants: which configurations to try, in what order, and
//! when to stop; mutations of the best ones.

use crate::check::*;
use crate::rows::*;
use crate::sweep::*;
use crate::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `lift tune` does; see [`tune_with`].
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Variants of the cost model timed first, in its order (all of them without a budget).
    pub top_k: usize,
    /// Timings per configuration whose median counts (with a budget: for the leaders, which
    /// are re-timed at the end; every other configuration is timed once).
    pub repeats: usize,
    pub check_steps: u64,
    /// Search (variant × work-group size) within this time; `None`: time the naive program
    /// and the cost model's `top_k` variants only, at the default work-group size.
    pub budget: Option<std::time::Duration>,
    /// Seed of the search's random choices (the same seed, program and sizes try the same
    /// configurations in the same order, timings aside).
    pub seed: u64,
    /// `--precision`: `tf32` is refused on any device without TF32 tensor cores; the variants
    /// are compiled for it and checked within its error bounds.
    pub precision: ir::Precision,
    /// CSV table, or JSON when the name ends in `.json`.
    pub out: Option<PathBuf>,
    /// SVG chart of the sweep.
    pub plot: Option<PathBuf>,
}

impl Default for TuneOptions {
    fn default() -> TuneOptions {
        TuneOptions {
            top_k: 8,
            repeats: 5,
            check_steps: CHECK_STEPS,
            budget: None,
            seed: 1,
            precision: ir::Precision::F32,
            out: None,
            plot: None,
        }
    }
}

/// Work-group sizes of `mapGlb` kernels the search tries (dimension 0, or 0 and 1). Sizes that
/// a kernel cannot take safely are not applied (`codegen_opencl::EmitOptions`), and a size
/// that leaves the plan unchanged is skipped without being timed.
pub const WORK_GROUPS: [&[usize]; 12] = [
    &[32],
    &[64],
    &[128],
    &[512],
    &[1024],
    &[16],
    &[8, 8],
    &[16, 16],
    &[32, 8],
    &[64, 4],
    &[128, 2],
    &[32, 32],
];

/// The note of a configuration a search did not check (see [`COMPETITIVE`]).
pub(crate) const DEFERRED: &str = "not checked (slower)";

/// A budgeted search checks a configuration against the interpreter only when its first timing
/// is within this factor of the best checked one (or nothing is checked yet).
pub(crate) const COMPETITIVE: f64 = 1.25;

/// Leaders re-timed with the full number of repeats at the end of a budgeted search.
pub(crate) const LEADERS: usize = 3;

/// The best configurations (built for their sizes, as every configuration is timed) that are
/// timed again with the sizes as kernel arguments, where generic kernels are legal: built-in
/// sizes are usually as fast or faster, but not always (convolution_row on the H200, 0.426
/// against 0.396 ms: the PTX differs only in `shl`/`or` against `mul`/`add`), and timing the
/// alternative of every configuration would double the search's cost.
pub(crate) const ALTERNATIVES: usize = 2;

/// A configuration with its sizes as kernel arguments ranks before the same one with them built
/// in only when it is faster by more than this share: within the noise of two timings, the
/// built-in sizes (the default everywhere else) are kept.
pub(crate) const ARGUMENTS_MARGIN: f64 = 0.02;

/// How a configuration timed with its sizes as kernel arguments is named in the report.
pub(crate) const SIZES_AS_ARGUMENTS: &str = "sizes as kernel arguments";

/// Share of the budget the search may start configurations in; the rest is for re-timing the
/// leaders and writing the report.
pub(crate) const SEARCH_SHARE: f64 = 0.85;

/// Without a budget, a configuration whose first run takes more than this factor times the best
/// so far is not run again for its median: it cannot win, and a slow one can take seconds a run.
pub(crate) const SLOW_CUT: f64 = 3.0;

pub(crate) fn slow(ms: f64, best: f64) -> bool {
    ms > best * SLOW_CUT
}

/// Share of a budget that each interpretation (the program's, and each variant's) may take at
/// most, in steps at [`INTERP_STEPS_PER_S`]; a check that needs more is left unchecked.
pub(crate) const CHECK_SHARE: f64 = 0.25;

/// Interpreter steps per second with error bounds, on the slow side (measured on this project's
/// 2-core machine under load: about 1.5e7 for mm's rows × columns); only used to cap the steps
/// a budget's checks may take.
pub(crate) const INTERP_STEPS_PER_S: f64 = 1.0e7;

/// The time a device's search has, and what its steps cost so far, on a clock the search is
/// given (the real one, or a test's): before each configuration it asks whether the estimate
/// of its cost still ends within the budget, and each measurement's time limit ends with it.
pub(crate) struct Budget {
    /// `None`: no budget, every step is admitted.
    pub(crate) total: Option<f64>,
    /// Seconds since the search started.
    pub(crate) clock: Box<dyn Fn() -> f64 + Send + Sync>,
    /// Seconds each configuration measured took (compiling, building, copying and timing), and
    /// the most one of each variant took: variants differ most in build time (a register-blocked
    /// product takes the NVIDIA driver seconds), which its other work-group sizes share.
    pub(crate) trials: Vec<f64>,
    pub(crate) per_variant: BTreeMap<usize, f64>,
    /// Seconds each interpretation of a variant took.
    pub(crate) interps: Vec<f64>,
}

impl Budget {
    pub(crate) fn new(total: Option<std::time::Duration>, clock: Box<dyn Fn() -> f64 + Send + Sync>) -> Budget {
        Budget {
            total: total.map(|t| t.as_secs_f64()),
            clock,
            trials: vec![],
            per_variant: BTreeMap::new(),
            interps: vec![],
        }
    }

    pub(crate) fn median(t: &[f64]) -> f64 {
        let mut t = t.to_vec();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(0.0)
    }

    /// What a configuration seen nowhere yet is expected to cost (the median: the first one
    /// also warms the device up).
    pub(crate) fn typical(&self) -> f64 {
        Budget::median(&self.trials)
    }

    pub(crate) fn typical_interp(&self) -> f64 {
        Budget::median(&self.interps)
    }

    /// What a configuration of `variant` is expected to cost: the most one of its configurations
    /// took, else the typical configuration's.
    pub(crate) fn estimate(&self, variant: usize) -> f64 {
        self.per_variant
            .get(&variant)
            .copied()
            .unwrap_or(0.0)
            .max(self.typical())
    }

    /// What re-timing a configuration with `repeats` runs costs: its first measurement again
    /// (the binary now comes from the cache) and the runs beyond the first.
    pub(crate) fn retime_cost(secs: f64, ms: f64, repeats: usize) -> f64 {
        secs + repeats.saturating_sub(1) as f64 * ms / 1e3
    }

    /// The time limit of measuring a configuration of `variant` (and `extra` seconds of checking
    /// it), or `None` where it would end past the search's share of the budget. The `first`
    /// configuration of a search is measured whatever it may cost (nothing is known yet), but
    /// no measurement's limit ends after the budget.
    pub(crate) fn admit(
        &self,
        variant: usize,
        extra: f64,
        first: bool,
        limit: std::time::Duration,
    ) -> Option<std::time::Duration> {
        (first || self.admits(SEARCH_SHARE, self.estimate(variant) + extra)).then(|| self.limit(limit))
    }

    /// Whether work expected to take `expected` seconds still ends within `share` of the budget.
    pub(crate) fn admits(&self, share: f64, expected: f64) -> bool {
        self.total.is_none_or(|b| (self.clock)() + expected < b * share)
    }

    /// A measurement's time limit: `limit`, and with a budget no later than [`FINISH_SHARE`] of
    /// it (at least a second: the first configuration is measured whatever the budget).
    pub(crate) fn limit(&self, limit: std::time::Duration) -> std::time::Duration {
        match self.total {
            Some(b) => limit.min(std::time::Duration::from_secs_f64(
                (b * FINISH_SHARE - (self.clock)()).max(1.0),
            )),
            None => limit,
        }
    }

    pub(crate) fn trial(&mut self, variant: usize, secs: f64) {
        self.trials.push(secs);
        let v = self.per_variant.entry(variant).or_insert(0.0);
        *v = v.max(secs);
    }

    pub(crate) fn interpreted(&mut self, secs: f64) {
        self.interps.push(secs);
    }
}

/// The random inputs of a tune, as values (for the interpreter, and parameters not given as
/// bytes) and as buffer bytes encoded once for every configuration.
pub(crate) struct TuneInputs {
    pub(crate) inputs: data::Inputs,
    pub(crate) bytes: Vec<Option<Vec<u8>>>,
    /// Nothing is compared with the interpreter: results are not decoded.
    pub(crate) skip_result: bool,
    /// `--precision`: what the variants are compiled for, and the error bounds of their check.
    pub(crate) precision: ir::Precision,
}

/// Share of the budget every measurement (a leader's re-timing too) ends in: the rest is for
/// the report, the calibration's refit, writing the cache and the process's exit (a loaded
/// machine's estimates are off by a few tenths of a second; mm at 4096³ on the H200 with
/// `--budget 60s` ended at 60.13 s when a measurement could run to the budget's very end).
pub(crate) const FINISH_SHARE: f64 = 0.95;

/// splitmix64: a small deterministic generator (the search is reproducible for a seed).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A configuration to try: a candidate (0: the program as written) and a work-group size.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Config {
    pub(crate) variant: usize,
    pub(crate) work_group: Vec<usize>,
}

/// The compiled form of a configuration, to tell the configurations that differ: its kernels
/// and launch plan.
pub(crate) fn plan_signature(program: &ir::Program, work_group: &[usize]) -> Option<(u64, usize)> {
    let c = compile_program(program.clone(), &measure_options(work_group)).ok()?;
    let plan = c.plan?;
    let text = format!("{}\n{}", plan.source, plan.describe());
    Some((fnv1a64(text.as_bytes()), plan.kernels.len()))
}

pub(crate) fn measure_options(work_group: &[usize]) -> Options {
    // as written: variant 0 is the naive default lowering of the program
    Options {
        as_written: true,
        work_group: work_group.to_vec(),
        ..Options::default()
    }
}

/// `lift tune` with its old arguments: no budget (the cost model's `top_k` variants).
pub fn tune(
    src: &str,
    sizes: &[String],
    devices: &[String],
    top_k: usize,
    repeats: usize,
    check_steps: u64,
    out_csv: Option<&Path>,
) -> Result<String, Error> {
    let opts = TuneOptions {
        top_k,
        repeats,
        check_steps,
        out: out_csv.map(Path::to_path_buf),
        ..TuneOptions::default()
    };
    tune_with(src, sizes, devices, &opts)
}

/// The interpreted values of the last variants checked: configurations of one variant share
/// its value, and only a few are kept alive (each can be as large as the inputs).
pub(crate) struct Checked {
    pub(crate) values: Vec<(usize, Bounded)>,
    /// How many are kept: two per device, as each device may go back to its last variant.
    pub(crate) keep: usize,
    /// The error bounds of the check (`--precision`).
    pub(crate) precision: ir::Precision,
}

impl Checked {
    pub(crate) fn has(&self, variant: usize) -> bool {
        self.values.iter().any(|(v, _)| *v == variant)
    }

    pub(crate) fn get(&mut self, variant: usize, program: &ir::Program, inputs: &data::Inputs, steps: u64) -> Bounded {
        if let Some((_, b)) = self.values.iter().find(|(v, _)| *v == variant) {
            return b.clone();
        }
        let b = crate::bounded_eval_at(program, inputs, steps, self.precision);
        if self.values.len() >= self.keep.max(2) {
            self.values.drain(..1);
        }
        self.values.push((variant, b.clone()));
        b
    }
}

/// The next configuration of a budgeted search on device `k`: a mutation of one of the best
/// configurations so far (a random one of the `LEADERS` fastest correct): another work-group
/// size (two times in three), or the next variant in `order` not yet tried with the parent's
/// work-group size. `None` when every configuration has been tried.
pub(crate) fn mutate(
    rows: &[Row],
    k: usize,
    tried: &[Config],
    order: &[usize],
    rng: &mut Rng,
) -> Option<(Config, &'static str)> {
    let mut best: Vec<&Row> = rows.iter().filter(|r| r.device_index == k && r.usable()).collect();
    best.sort_by(|a, b| {
        a.rank_key()
            .0
            .cmp(&b.rank_key().0)
            .then(a.rank_key().1.total_cmp(&b.rank_key().1))
    });
    let parents: Vec<Config> = best
        .iter()
        .take(LEADERS)
        .map(|r| Config {
            variant: r.variant,
            work_group: r.work_group.clone(),
        })
        .collect();
    let fresh = |c: &Config| !tried.contains(c);
    let next_variant = |wg: &[usize]| {
        order
            .iter()
            .map(|&variant| Config {
                variant,
                work_group: wg.to_vec(),
            })
            .find(|c| fresh(c))
    };
    let other_work_group = |variant: usize, rng: &mut Rng| {
        let options: Vec<Config> = WORK_GROUPS
            .iter()
            .map(|wg| Config {
                variant,
                work_group: wg.to_vec(),
            })
            .filter(|c| fresh(c))
            .collect();
        (!options.is_empty()).then(|| options[rng.below(options.len())].clone())
    };
    if !parents.is_empty() {
        let parent = parents[rng.below(parents.len())].clone();
        if rng.below(3) < 2 {
            if let Some(c) = other_work_group(parent.variant, rng) {
                return Some((c, "a work-group mutation"));
            }
        }
        if let Some(c) = next_variant(&parent.work_group) {
            return Some((c, "a variant mutation"));
        }
        for p in &parents {
            if let Some(c) = other_work_group(p.variant, rng) {
                return Some((c, "a work-group mutation"));
            }
        }
    }
    // Nothing to mutate (no correct configuration yet), or the leaders are exhausted: the
    // model's order, then any work-group size of any variant.
    if let Some(c) = next_variant(&[]) {
        return Some((c, "the cost model's order"));
    }
    let all: Vec<usize> = std::iter::once(0).chain(order.iter().copied()).collect();
    all.iter()
        .find_map(|&v| other_work_group(v, rng))
        .map(|c| (c, "exhausting the space"))
}

/// The variants to seed a search with, in order: the calibrated `order` (variant ids from 1)
/// alternating with the model's own (1, 2, ...), each once.
pub(crate) fn seed_order(order: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::BTreeSet::new();
    order
        .iter()
        .zip(1..)
        .flat_map(|(&c, m)| [c, m])
        .filter(|v| seen.insert(*v))
        .collect()
}
