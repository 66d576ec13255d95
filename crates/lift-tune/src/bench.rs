//! `lift bench`: device times of a program on random inputs, next to a device-to-device copy of
//! its input bytes measured in the same session (the bandwidth unit), as text or one JSON object.
//!
//! A high-level program is timed as the variant `lift run` would use (tuned for this device at
//! these sizes, else the cost model's best), or as written with `as_written`. With check sizes,
//! that same variant first runs at those (smaller) sizes and is compared with the interpreter of
//! the program as given (f64 with float32 error bounds, as `lift tune` checks), so a timing is
//! never reported for a variant that computes something else.

use crate::{backend, compile, data, parse_sizes, values_close, verify_checks, Compiled, Error, Options};
use crate::{bounded_eval_at, bounded_eval_program, check_result, Check, CHECK_STEPS};
use ir::Diagnostic;
use std::collections::BTreeMap;

pub struct BenchOptions {
    pub device: Option<String>,
    pub repeats: usize,
    /// Compare the timed run's result with the interpreter (float32, relative 1e-4).
    pub check: bool,
    /// Sizes at which the timed variant is first checked against the interpreter (`K=V`).
    pub check_sizes: Vec<String>,
    /// Time the program as written (the default lowering of a high-level program).
    pub as_written: bool,
    /// Split over these devices (`lift bench --devices`), next to the first of them alone.
    pub devices: Option<String>,
    /// `--precision`: `tf32` is refused on a device without TF32 tensor cores, and the check
    /// at `check_sizes` then allows TF32 products (`bounded_eval_at`).
    pub precision: ir::Precision,
}

/// What one `lift bench` measured.
#[derive(Clone, Debug)]
pub struct BenchReport {
    pub device: String,
    pub sizes: BTreeMap<String, i64>,
    /// The variant timed: `as written`, or its description.
    pub variant: String,
    pub tuned: bool,
    pub codegen_ms: f64,
    /// Median device time per kernel launch, in order.
    pub kernels: Vec<(String, f64)>,
    pub total_ms: f64,
    pub repeats: usize,
    pub input_bytes: usize,
    pub copy_ms: Option<f64>,
    /// What was checked, in words (`not checked` when nothing was).
    pub check: String,
    /// For a program with host sections: its whole run, loops included.
    pub host: Option<HostBench>,
}

/// What `lift bench` measured of a program with host sections, in the run of median wall time.
#[derive(Clone, Debug)]
pub struct HostBench {
    /// Host wall time from the upload of the inputs to the read-back of the result (ms).
    pub wall_ms: f64,
    /// Each loop: its kind, the steps it took and the median of its steps' summed kernel times.
    pub loops: Vec<(&'static str, usize, Option<f64>)>,
    /// Every run's wall time (ms), in order.
    pub walls_ms: Vec<f64>,
}

pub fn bench(src: &str, sizes: &[String], opts: &BenchOptions) -> Result<BenchReport, Error> {
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let device = host_runner::device_info(opts.device.as_deref()).map_err(|e| Error::plain(e.to_string()))?;
    let t0 = std::time::Instant::now();
    let copts = Options {
        as_written: opts.as_written,
        sizes: sizes.clone(),
        tuned_for: Some(device.name.clone()),
        work_group_limit: Some(crate::work_group_limit(&device)),
        specialise: true,
        ..Options::default()
    };
    let copts = crate::with_precision(copts, opts.precision, Some(&device))?;
    if opts.check && opts.precision != ir::Precision::F32 {
        return Err(Error::plain(format!(
            "`--check` compares with the interpreter within 1e-4, which products at `--precision {}` need not meet; check with `--check-size` (its error bounds allow them)",
            opts.precision
        )));
    }
    let compiled = compile(src, &copts)?;
    let codegen_ms = t0.elapsed().as_secs_f64() * 1e3;
    if let Some(hp) = &compiled.host {
        if opts.precision != ir::Precision::F32 {
            return Err(Error::plain(format!(
                "`lift bench --precision {}` of a program with host sections is not supported yet; bench its loop body as a program of its own",
                opts.precision
            )));
        }
        return bench_host(&compiled, hp, sizes, opts, codegen_ms);
    }
    let plan = compiled
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: no kernels"))?;

    let mut check = "not checked".to_string();
    if !opts.check_sizes.is_empty() {
        check = check_at(&compiled, &opts.check_sizes, opts.device.as_deref(), opts.precision)?;
    }

    // Unless the result is compared with the interpreter, the inputs are made as their
    // buffers' bytes and the result is not decoded, as `lift tune` does: interpreter values of
    // mm's two 4096² inputs and its result take gigabytes, their bytes 192 MiB.
    let (inputs, bytes) = data::random_inputs_lean(&compiled.given, &sizes, 42, opts.check)?;
    for info in [&compiled.given_info, &compiled.info] {
        verify_checks(info, &inputs)?;
    }
    let prepared = backend::Prepared {
        input_bytes: &bytes,
        skip_result: !opts.check,
    };
    let m = backend::run_measured_with(
        plan,
        &inputs,
        &prepared,
        opts.device.as_deref(),
        true,
        opts.repeats,
        true,
    )?;
    if opts.check {
        let lookup = |n: &str| inputs.sizes.get(n).copied();
        let expect = ir::interp::eval(&compiled.given, &inputs.values, &lookup)
            .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
        if !values_close(&expect, &m.value, 1e-4) {
            return Err(Error::plain(
                "the OpenCL result differs from the interpreter (relative tolerance 1e-4)",
            ));
        }
        let here = format!("equals the interpreter at {} (float32, 1e-4)", sizes_text(&sizes));
        check = if check == "not checked" {
            here
        } else {
            format!("{check}; {here}")
        };
    }
    let kernels: Vec<(String, f64)> = m.kernel_ns.iter().map(|(k, t)| (k.clone(), *t as f64 / 1e6)).collect();
    let (variant, tuned) = match &compiled.variant {
        Some(v) => (v.description.clone(), v.tuned),
        None => ("as written".to_string(), false),
    };
    Ok(BenchReport {
        device: m.device,
        sizes,
        variant,
        tuned,
        codegen_ms,
        total_ms: kernels.iter().map(|k| k.1).sum(),
        kernels,
        repeats: opts.repeats,
        input_bytes: m.input_bytes,
        copy_ms: m.copy_ns.map(|c| c / 1e6),
        check,
        host: None,
    })
}

/// `lift bench` of a program with host sections: the whole program runs `repeats` times (its
/// kernels built once, before the first), each run profiled; the run of median wall time is
/// reported: its wall time, each loop's steps, and the kernels' device times, in all and per
/// step. With check sizes the program first runs at those and is compared with the
/// interpreter.
fn bench_host(
    compiled: &Compiled,
    hp: &crate::host::HostProgram,
    sizes: BTreeMap<String, i64>,
    opts: &BenchOptions,
    codegen_ms: f64,
) -> Result<BenchReport, Error> {
    let device = opts.device.as_deref();
    // Within float32 error bounds, as `lift tune` checks (a fixed tolerance fails a chaotic
    // loop such as n-body's 1,000 steps, whose legal float32 results drift apart).
    let against_interpreter = |inputs: &data::Inputs, got: &ir::interp::Value, at: &str| {
        let lookup = |n: &str| inputs.sizes.get(n).copied();
        let expect = ir::interp::eval(&compiled.given, &inputs.values, &lookup)
            .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
        if values_close(&expect, got, 1e-4) {
            return Ok(format!("equals the interpreter at {at} (float32, 1e-4)"));
        }
        let reference = bounded_eval_program(&compiled.given, inputs, CHECK_STEPS);
        let c = match &reference {
            Ok(r) => check_result(r, r, got),
            Err(e) => e.clone(),
        };
        verdict(c, at)
    };
    let mut checks = vec![];
    if !opts.check_sizes.is_empty() {
        let small: BTreeMap<String, i64> = parse_sizes(&opts.check_sizes)?.into_iter().collect();
        let inputs = data::random_inputs(&compiled.given, &small, 7)?;
        verify_checks(&compiled.given_info, &inputs)?;
        let got = backend::run_host(hp, &inputs, device, false)?.0;
        checks.push(against_interpreter(&inputs, &got, &sizes_text(&small))?);
    }
    let inputs = data::random_inputs(&compiled.given, &sizes, 42)?;
    verify_checks(&compiled.given_info, &inputs)?;
    let mut runs = vec![];
    for _ in 0..opts.repeats.max(1) {
        let (value, m) = backend::run_host_measured(hp, &inputs, device, true)?;
        let m = m.ok_or_else(|| Error::plain("internal: a profiled run without its measure"))?;
        runs.push((value, m));
    }
    if opts.check {
        checks.push(against_interpreter(&inputs, &runs[0].0, &sizes_text(&sizes))?);
    }
    let walls_ms: Vec<f64> = runs.iter().map(|(_, m)| m.wall_ms).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| walls_ms[a].total_cmp(&walls_ms[b]));
    let m = &runs[order[order.len() / 2]].1;
    let median = |xs: &[f64]| {
        let mut xs = xs.to_vec();
        xs.sort_by(f64::total_cmp);
        xs.get(xs.len() / 2).copied()
    };
    let (variant, tuned) = match &compiled.variant {
        Some(v) => (v.description.clone(), v.tuned),
        None => (
            "as written (host sections: each unit its own variant)".to_string(),
            false,
        ),
    };
    Ok(BenchReport {
        device: m.device.clone(),
        sizes,
        variant,
        tuned,
        codegen_ms,
        kernels: m
            .per_kernel
            .iter()
            .map(|(k, n, ms)| (format!("{k} ({n} launches)"), *ms))
            .collect(),
        total_ms: m.kernel_ms,
        repeats: runs.len(),
        input_bytes: 0,
        copy_ms: None,
        check: if checks.is_empty() {
            "not checked".into()
        } else {
            checks.join("; ")
        },
        host: Some(HostBench {
            wall_ms: m.wall_ms,
            loops: m
                .loops
                .iter()
                .map(|(kind, steps, times)| (*kind, *steps, median(times)))
                .collect(),
            walls_ms,
        }),
    })
}

/// Runs the compiled variant at the check sizes and compares it with the bounded interpreter
/// of the program as given; an error when it is wrong.
fn check_at(
    compiled: &Compiled,
    sizes: &[String],
    device: Option<&str>,
    precision: ir::Precision,
) -> Result<String, Error> {
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let at = sizes_text(&sizes);
    let inputs = data::random_inputs(&compiled.given, &sizes, 7)?;
    for info in [&compiled.given_info, &compiled.info] {
        if let Err(e) = verify_checks(info, &inputs) {
            // The variant was chosen for the timed sizes; it may not apply at these.
            return Ok(format!(
                "not checked: at {at} the variant does not apply ({})",
                e.message()
            ));
        }
    }
    // The timed kernels are built for the timed sizes: the same variant, with the same
    // work-group size, is built again for these (or, with the sizes as kernel arguments, the
    // same kernels run at them).
    let limit = host_runner::device_info(device).map_err(|e| Error::plain(e.to_string()))?;
    let again = crate::compile_program(
        compiled.program.clone(),
        &Options {
            as_written: true,
            sizes: sizes.clone(),
            work_group: compiled
                .variant
                .as_ref()
                .map(|v| v.work_group.clone())
                .unwrap_or_default(),
            work_group_limit: Some(crate::work_group_limit(&limit)),
            // (a tuned configuration with its sizes as arguments: the very kernels timed)
            specialise: compiled.variant.as_ref().is_none_or(|v| v.built_in),
            precision,
            compute_capability: limit.compute_capability,
            ..Options::default()
        },
    )?;
    let plan = again
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: no kernels"))?;
    let got = backend::run(plan, &inputs, device, false)?.0;
    let reference = bounded_eval_at(&compiled.given, &inputs, CHECK_STEPS, precision);
    let variant = bounded_eval_at(&compiled.program, &inputs, CHECK_STEPS, precision);
    let c = match (&reference, &variant) {
        (Ok(r), Ok(v)) => check_result(r, v, &got),
        (Err(e), _) | (_, Err(e)) => e.clone(),
    };
    let bounds = match precision {
        ir::Precision::F32 => "float32",
        ir::Precision::Tf32 => "TF32",
    };
    match c {
        Check::Ok { bound, .. } => Ok(format!(
            "equals the interpreter at {at} (within {bounds} error bounds, largest {bound:.1e})"
        )),
        Check::Unchecked(why) => Ok(format!("not checked at {at}: {why}")),
        Check::NotRun => Ok(format!("not checked at {at}")),
        Check::Wrong(why) => Err(Error::plain(format!(
            "the timed variant differs from the interpreter at {at}: {why}"
        ))),
    }
}

fn sizes_text(sizes: &BTreeMap<String, i64>) -> String {
    sizes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl BenchReport {
    pub fn text(&self) -> String {
        let mut out = format!(
            "device: {}\nsizes: {}\nvariant: {}{}\ncode generation: {:.2} ms\n",
            self.device,
            sizes_text(&self.sizes),
            self.variant,
            if self.tuned { " (from the tuning cache)" } else { "" },
            self.codegen_ms
        );
        for (k, t) in &self.kernels {
            out.push_str(&format!("  {k}: {t:.4} ms\n"));
        }
        if let Some(h) = &self.host {
            out.push_str(&format!(
                "kernels total (the run of median wall time of {}): {:.4} ms\n",
                self.repeats, self.total_ms
            ));
            for (l, (kind, steps, per_step)) in h.loops.iter().enumerate() {
                out.push_str(&format!("loop {l} ({kind}): {steps} steps"));
                match per_step {
                    Some(t) => out.push_str(&format!(", kernels per step (median): {t:.4} ms\n")),
                    None => out.push('\n'),
                }
            }
            out.push_str(&format!(
                "total time (host wall, upload to read-back; median of {}): {:.4} ms ({:.1} % above the kernels' sum)\n",
                self.repeats,
                h.wall_ms,
                (h.wall_ms / self.total_ms.max(1e-6) - 1.0) * 100.0
            ));
        } else {
            out.push_str(&format!(
                "kernels total (median of {}): {:.4} ms\n",
                self.repeats, self.total_ms
            ));
        }
        if let Some(c) = self.copy_ms {
            out.push_str(&format!(
                "baseline copy of {} input bytes: {c:.4} ms\nratio kernels/copy: {:.2}\n",
                self.input_bytes,
                self.total_ms / c
            ));
        }
        out.push_str(&format!("check: {}\n", self.check));
        out
    }

    /// One JSON object (the suite script's raw data).
    pub fn json(&self, program: &str) -> String {
        let v = serde_json::json!({
            "program": program,
            "device": self.device,
            "sizes": self.sizes,
            "variant": self.variant,
            "tuned": self.tuned,
            "codegen_ms": self.codegen_ms,
            "kernels": self.kernels.iter().map(|(k, t)| serde_json::json!({"name": k, "ms": t})).collect::<Vec<_>>(),
            "total_ms": self.total_ms,
            "repeats": self.repeats,
            "input_bytes": self.input_bytes,
            "copy_ms": self.copy_ms,
            "check": self.check,
            "host": self.host.as_ref().map(|h| serde_json::json!({
                "wall_ms": h.wall_ms,
                "walls_ms": h.walls_ms,
                "loops": h.loops.iter().map(|(kind, steps, per_step)| serde_json::json!({
                    "kind": kind, "steps": steps, "kernels_per_step_ms": per_step,
                })).collect::<Vec<_>>(),
            })),
        });
        format!("{v}\n")
    }
}

/// `lift bench --devices`: the program split over several devices and, in the same invocation,
/// on the first of them alone, each phase of each device timed (see [`crate::devices::measure`]).
#[derive(Clone, Debug)]
pub struct DevicesReport {
    pub devices: Vec<String>,
    pub sizes: BTreeMap<String, i64>,
    pub repeats: usize,
    pub split: crate::devices::Measured,
    pub single: crate::devices::Measured,
    pub check: String,
}

pub fn bench_devices(src: &str, sizes: &[String], opts: &BenchOptions) -> Result<DevicesReport, Error> {
    let spec = opts.devices.as_deref().unwrap_or("gpus");
    let devices = crate::devices::resolve(spec)?;
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let typed = compile(src, &Options::types_only())?;
    let mut checks = vec![];
    if !opts.check_sizes.is_empty() {
        let small: BTreeMap<String, i64> = parse_sizes(&opts.check_sizes)?.into_iter().collect();
        let inputs = data::random_inputs(&typed.given, &small, 7)?;
        verify_checks(&typed.given_info, &inputs)?;
        let at = sizes_text(&small);
        let reference = Reference::new(&typed.given, &inputs)?;
        for (what, devs) in [("split", &devices[..]), ("first device alone", &devices[..1])] {
            let m = crate::devices::measure(src, &inputs, devs, 1)?;
            let c = reference.against(&m.value, &at)?;
            checks.push(format!("{what}: {c}"));
        }
    }
    let inputs = data::random_inputs(&typed.given, &sizes, 42)?;
    verify_checks(&typed.given_info, &inputs)?;
    let split = crate::devices::measure(src, &inputs, &devices, opts.repeats)?;
    let single = crate::devices::measure(src, &inputs, &devices[..1], opts.repeats)?;
    if opts.check {
        let at = sizes_text(&sizes);
        let reference = Reference::new(&typed.given, &inputs)?;
        for (what, m) in [("split", &split), ("first device alone", &single)] {
            let c = reference.against(&m.value, &at)?;
            checks.push(format!("{what}: {c}"));
        }
    }
    Ok(DevicesReport {
        devices,
        sizes,
        repeats: opts.repeats.max(1),
        split,
        single,
        check: if checks.is_empty() {
            "not checked".into()
        } else {
            checks.join("; ")
        },
    })
}

/// The interpreter's result of `given` on `inputs`, computed once for the split and the
/// one-device run (mm at 256³ takes seconds), and its error bounds when they are needed.
struct Reference<'a> {
    given: &'a ir::Program,
    inputs: &'a data::Inputs,
    expect: ir::interp::Value,
    /// The bounded interpreter's result (or why there is none), once needed.
    bounded: std::cell::OnceCell<Result<ir::interp::Value, Check>>,
}

impl<'a> Reference<'a> {
    fn new(given: &'a ir::Program, inputs: &'a data::Inputs) -> Result<Reference<'a>, Error> {
        let lookup = |n: &str| inputs.sizes.get(n).copied();
        let expect = ir::interp::eval(given, &inputs.values, &lookup)
            .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
        Ok(Reference {
            given,
            inputs,
            expect,
            bounded: std::cell::OnceCell::new(),
        })
    }

    /// `got` against the interpreter: within 1e-4, else within float32 error bounds (as
    /// `lift tune` checks: a chaotic host loop's legal float32 results drift apart); an error
    /// when it differs.
    fn against(&self, got: &ir::interp::Value, at: &str) -> Result<String, Error> {
        if values_close(&self.expect, got, 1e-4) {
            return Ok(format!("equals the interpreter at {at} (float32, 1e-4)"));
        }
        let c = match self
            .bounded
            .get_or_init(|| bounded_eval_program(self.given, self.inputs, CHECK_STEPS))
        {
            Ok(r) => check_result(r, r, got),
            Err(e) => e.clone(),
        };
        verdict(c, at)
    }
}

fn verdict(c: Check, at: &str) -> Result<String, Error> {
    match c {
        Check::Ok { bound, .. } => Ok(format!(
            "equals the interpreter at {at} (within float32 error bounds, largest {bound:.1e})"
        )),
        Check::Unchecked(why) => Ok(format!(
            "not checked at {at}: further than 1e-4 from the float32 interpreter, and {why}"
        )),
        Check::NotRun => Ok(format!("not checked at {at}")),
        Check::Wrong(why) => Err(Error::plain(format!(
            "the OpenCL result differs from the interpreter at {at}: {why}"
        ))),
    }
}

fn kernel_ms(m: &crate::devices::MeasuredRun) -> f64 {
    // The devices run side by side: the run's kernel time is the slowest device's.
    m.devices.iter().map(|d| d.times.kernel_ms).fold(0.0, f64::max)
}

fn device_json(d: &crate::devices::MeasuredDevice) -> serde_json::Value {
    serde_json::json!({
        "index": d.index,
        "device": d.device,
        "name": d.name,
        "share": [d.range.start, d.range.end],
        "upload_ms": d.times.upload_ms,
        "kernel_ms": d.times.kernel_ms,
        "download_ms": d.times.download_ms,
        "decode_ms": d.times.decode_ms,
        "exchange_ms": d.times.exchange_ms,
    })
}

fn measured_json(m: &crate::devices::Measured) -> serde_json::Value {
    serde_json::json!({
        "devices": m.median.devices.iter().map(device_json).collect::<Vec<_>>(),
        "shares": m.shares,
        "setup_ms": m.setup_ms,
        "gather_ms": m.median.gather_ms,
        "kernel_ms": kernel_ms(&m.median),
        "wall_ms": m.median.wall_ms,
        "total_ms": m.median.total_ms,
        "walls_ms": m.walls_ms,
    })
}

impl DevicesReport {
    /// The one-device time over the split one: wall (to the bytes read back), kernels only
    /// (the slowest device's), and total (to the gathered values).
    pub fn speedup(&self) -> (f64, f64, f64) {
        let (one, split) = (&self.single.median, &self.split.median);
        (
            one.wall_ms / split.wall_ms.max(1e-9),
            kernel_ms(one) / kernel_ms(split).max(1e-9),
            one.total_ms / split.total_ms.max(1e-9),
        )
    }

    pub fn text(&self) -> String {
        let s = &self.split;
        let mut out = format!(
            "devices: {}\nsizes: {}\nsplit: {} = {} ({} sliced; {} copied whole to every device){}\n",
            self.devices.join(","),
            sizes_text(&self.sizes),
            s.size,
            s.n,
            if s.sliced.is_empty() {
                "nothing".into()
            } else {
                s.sliced.join(", ")
            },
            if s.whole.is_empty() {
                "nothing".into()
            } else {
                s.whole.join(", ")
            },
            if s.steps > 1 || s.median.devices.iter().any(|d| d.times.exchange_ms > 0.0) {
                format!("; a host loop of {} steps, its state exchanged every step", s.steps)
            } else {
                String::new()
            }
        );
        for why in &s.shares {
            out.push_str(&format!("share of {why}\n"));
        }
        out.push_str(&format!(
            "times in ms, the run of median wall time of {} after a warm-up run; kernels from profiling \
             events (summed over kernels and steps), every other phase on the host around blocking \
             calls; inputs sliced and made into bytes before the timed runs; wall: the first upload to \
             the last part's bytes read back; total: to the gathered values\n",
            self.repeats
        ));
        for (what, m) in [("split", s), ("first device alone", &self.single)] {
            out.push_str(&format!("{what}:\n"));
            for (d, setup) in m.median.devices.iter().zip(&m.setup_ms) {
                let t = &d.times;
                out.push_str(&format!(
                    "  device {} ({}, {}): share {}..{}: upload {:.3}, kernels {:.3}, download {:.3}, decode {:.3}, exchange {:.3} (setup {:.1})\n",
                    d.index, d.device, d.name, d.range.start, d.range.end, t.upload_ms, t.kernel_ms,
                    t.download_ms, t.decode_ms, t.exchange_ms, setup
                ));
            }
            out.push_str(&format!(
                "  gather {:.3}, kernels (slowest device) {:.3}, wall {:.3}, total {:.3}\n",
                m.median.gather_ms,
                kernel_ms(&m.median),
                m.median.wall_ms,
                m.median.total_ms
            ));
        }
        let (wall, kernels, total) = self.speedup();
        out.push_str(&format!(
            "speed-up over the first device alone: wall {wall:.2}x, kernels {kernels:.2}x, total {total:.2}x\n"
        ));
        out.push_str(&format!("check: {}\n", self.check));
        out
    }

    /// One JSON object.
    pub fn json(&self, program: &str) -> String {
        let (wall, kernels, total) = self.speedup();
        let v = serde_json::json!({
            "program": program,
            "devices": self.devices,
            "sizes": self.sizes,
            "repeats": self.repeats,
            "split_size": self.split.size,
            "split_length": self.split.n,
            "steps": self.split.steps,
            "sliced": self.split.sliced,
            "whole": self.split.whole,
            "split": measured_json(&self.split),
            "single": measured_json(&self.single),
            "speedup_wall": wall,
            "speedup_kernels": kernels,
            "speedup_total": total,
            "timing": "kernels: profiling events summed over kernels and steps; other phases: host clock around blocking calls; wall: first upload to the last part's bytes on the host; total: to the gathered values",
            "check": self.check,
        });
        format!("{v}\n")
    }
}
