//! Measuring and tuning: `lift explore` (rewrite exploration, crate `rewrite`), `lift tune`
//! (autotuning sweeps of the variants across OpenCL devices, the best kept in the tuning cache,
//! `lift_compile::cache`) and `lift bench` ([`bench`]: a program timed against its as-written
//! lowering, on one device or split over several).
//!
//! Modules: [`sweep`] is the tuner's entry; [`search`] its options, budget and order; [`check`]
//! the comparison with the interpreter; [`measure`] one timing; [`calibration`] the cost model
//! fitted to measured times; [`rows`] and [`report`] what is kept and printed; [`progress`] what
//! is shown meanwhile.

pub mod bench;
pub mod calibration;
pub mod check;
pub mod measure;
pub mod progress;
pub mod report;
pub mod rows;
pub mod search;
pub mod sweep;
#[cfg(test)]
mod tests;

pub use check::{bounded_eval, bounded_eval_at, bounded_eval_program, check_result, Check, CHECK_STEPS};
pub use measure::{TIME_LIMIT_S, TIME_LIMIT_VAR};
pub use search::{tune, TuneOptions, WORK_GROUPS};
pub use sweep::tune_with;

// The names the stages below are known by in this crate.
use lift_compile::{compile, compile_program, host, parse_sizes, Compiled, Error, Options};
use lift_data as data;
use lift_devices as devices;
use lift_runtime as backend;
use lift_runtime::{values_close, verify_checks, with_precision, work_group_limit};

pub use lift_compile::cache::{
    best_entry, best_variant, cached, fnv1a64, program_key, store_cached, tuned_entry, tuned_ms, work_group_text, Tuned,
};
use lift_compile::cache::{cache_path, read_cache, sizes_text, store_best, update_cache};

/// `lift explore`: the variants found, with their estimated costs and the e-graph statistics,
/// after a line saying how they were validated: with `opts.built_in` (the sizes `lift tune`
/// builds into every kernel it times), or generically, for kernels taking every size as an
/// argument (`lift compile` without `--known-size`).
pub fn explore_text(src: &str, opts: &rewrite::Options) -> Result<String, Error> {
    let c = compile(src, &Options::types_only())?;
    let validation = if opts.built_in.is_empty() {
        "validated generically: every size a kernel argument (no --size)".to_string()
    } else {
        format!(
            "validated with the sizes built in: {} (as `lift tune` times them)",
            sizes_text(&opts.built_in)
        )
    };
    Ok(format!(
        "{validation}\n{}",
        rewrite::explore(&c.given, &c.given_info, opts)?
    ))
}
