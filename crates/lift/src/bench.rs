//! `lift bench`: device times of a program on random inputs, next to a device-to-device copy of
//! its input bytes measured in the same session (the bandwidth unit), as text or one JSON object.
//!
//! A high-level program is timed as the variant `lift run` would use (tuned for this device at
//! these sizes, else the cost model's best), or as written with `as_written`. With check sizes,
//! that same variant first runs at those (smaller) sizes and is compared with the interpreter of
//! the program as given (f64 with float32 error bounds, as `lift tune` checks), so a timing is
//! never reported for a variant that computes something else.

use crate::tune::{bounded_eval_program, check_result, Check, CHECK_STEPS};
use crate::{backend, compile, data, parse_sizes, values_close, verify_checks, Compiled, Error, Options};
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
        ..Options::default()
    };
    let compiled = compile(src, &copts)?;
    let codegen_ms = t0.elapsed().as_secs_f64() * 1e3;
    if compiled.host.is_some() {
        return Err(Error::plain(
            "`lift bench` of a program with host sections (a host `iterate`, `iterate-until` or `if`) is not supported yet; `lift run --time` times its kernels and steps",
        ));
    }
    let plan = compiled
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: no kernels"))?;

    let mut check = "not checked".to_string();
    if !opts.check_sizes.is_empty() {
        check = check_at(&compiled, &opts.check_sizes, opts.device.as_deref())?;
    }

    let inputs = data::random_inputs(&compiled.given, &sizes, 42)?;
    for info in [&compiled.given_info, &compiled.info] {
        verify_checks(info, &inputs)?;
    }
    let m = backend::run_measured(plan, &inputs, opts.device.as_deref(), true, opts.repeats, true)?;
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
    })
}

/// Runs the compiled variant at the check sizes and compares it with the bounded interpreter
/// of the program as given; an error when it is wrong.
fn check_at(compiled: &Compiled, sizes: &[String], device: Option<&str>) -> Result<String, Error> {
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
    let plan = compiled
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: no kernels"))?;
    let got = backend::run(plan, &inputs, device, false)?.0;
    let reference = bounded_eval_program(&compiled.given, &inputs, CHECK_STEPS);
    let variant = bounded_eval_program(&compiled.program, &inputs, CHECK_STEPS);
    let c = match (&reference, &variant) {
        (Ok(r), Ok(v)) => check_result(r, v, &got),
        (Err(e), _) | (_, Err(e)) => e.clone(),
    };
    match c {
        Check::Ok { bound, .. } => Ok(format!(
            "equals the interpreter at {at} (within float32 error bounds, largest {bound:.1e})"
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
        out.push_str(&format!(
            "kernels total (median of {}): {:.4} ms\n",
            self.repeats, self.total_ms
        ));
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
        });
        format!("{v}\n")
    }
}
