//! Timing one configuration on one device within `lift tune`'s time limit.

use crate::search::*;
use crate::*;
use ir::interp::Value;

/// Seconds one variant may take to compile and run on one device before `lift tune` stops
/// (its results so far stay in the tuning cache); default [`TIME_LIMIT_S`].
pub const TIME_LIMIT_VAR: &str = "LIFT_TUNE_TIME_LIMIT";
pub const TIME_LIMIT_S: f64 = 600.0;

pub(crate) fn time_limit() -> Result<std::time::Duration, Error> {
    let Some(text) = std::env::var(TIME_LIMIT_VAR).ok().filter(|t| !t.is_empty()) else {
        return Ok(std::time::Duration::from_secs_f64(TIME_LIMIT_S));
    };
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Error::plain(format!(
                "{TIME_LIMIT_VAR}={text}: expected a positive number of seconds"
            ))
        })
}

/// [`measure`] on its own thread, waiting at most `limit`; `None` when it did not finish (a
/// kernel that hangs cannot be stopped through OpenCL: the thread is left to the process exit).
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure_within(
    limit: std::time::Duration,
    program: &ir::Program,
    work_group: &[usize],
    inputs: &std::sync::Arc<TuneInputs>,
    device: &str,
    repeats: usize,
    built_in: bool,
) -> Option<Result<(Value, f64), Error>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (program, inputs, device) = (program.clone(), inputs.clone(), device.to_string());
    let work_group = work_group.to_vec();
    let spawned = std::thread::Builder::new()
        .name("lift-tune-measure".into())
        .stack_size(ir::STACK_BYTES)
        .spawn(move || {
            let _ = tx.send(measure(&program, &work_group, &inputs, &device, repeats, built_in));
        });
    if let Err(e) = spawned {
        return Some(Err(Error::plain(format!(
            "cannot start a thread to measure a variant: {e}"
        ))));
    }
    match rx.recv_timeout(limit) {
        Ok(r) => Some(r),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Some(Err(Error::plain(
            "internal error: measuring this variant panicked (a bug in lift)",
        ))),
    }
}

/// Compiles and runs one variant, with the sizes built into its kernels or (`built_in` false)
/// as their arguments: its result and the median over `repeats` of its kernels' total time.
pub(crate) fn measure(
    prog: &ir::Program,
    work_group: &[usize],
    inputs: &TuneInputs,
    device: &str,
    repeats: usize,
    built_in: bool,
) -> Result<(Value, f64), Error> {
    // Generated within the device's work-group limits, as `lift run` on it would.
    let limit = host_runner::device_info(Some(device)).map_err(|e| Error::plain(e.to_string()))?;
    let opts = Options {
        work_group_limit: Some(crate::work_group_limit(&limit)),
        sizes: inputs.inputs.sizes.clone(),
        specialise: built_in,
        precision: inputs.precision,
        compute_capability: limit.compute_capability,
        ..measure_options(work_group)
    };
    let c = compile_program(prog.clone(), &opts)?;
    verify_checks(&c.info, &inputs.inputs)?;
    let plan = c.plan.as_ref().ok_or_else(|| Error::plain("internal: no kernels"))?;
    let prepared = backend::Prepared {
        input_bytes: &inputs.bytes,
        skip_result: inputs.skip_result,
    };
    let m = backend::run_measured_with(
        plan,
        &inputs.inputs,
        &prepared,
        Some(device),
        true,
        repeats.max(1),
        false,
    )?;
    let ns: u64 = m.kernel_ns.iter().map(|(_, t)| *t).sum();
    Ok((m.value, ns as f64 / 1e6))
}
