//! What every way of running kernels shares: the plan's sizes evaluated at the user's
//! ([`Env`]), one kernel's launch translated from the plan's arguments, and the errors the device
//! reports (a refused build, a failed length or bounds check), decoded the same way everywhere.

use codegen_opencl::{KernelArg, KernelPlan};
use host_runner::Launch;
use ir::interp::Value;
use ir::{Diagnostic, Type};
use lift_compile::Error;
use lift_data::layout::layout;
use std::collections::BTreeMap;

pub(crate) struct Env {
    /// C-level size names (v_N, v_X1) to values (capacities for run-time lengths).
    pub(crate) values: BTreeMap<String, i64>,
}

impl Env {
    /// The plan's C-level sizes from the user's (`inputs.sizes`), then the capacities of its
    /// run-time lengths, which are expressions of those.
    pub(crate) fn of_plan(plan: &KernelPlan, sizes: &BTreeMap<String, i64>) -> Result<Env, Error> {
        let mut env = Env {
            values: BTreeMap::new(),
        };
        for (user, c) in &plan.sizes {
            if let Some(v) = sizes.get(user) {
                env.values.insert(c.clone(), *v);
            }
        }
        // Kernels built for other sizes would index past their buffers or compute less.
        for (user, v) in &plan.specialised {
            if sizes.get(user) != Some(v) {
                return Err(Error::Plain {
                    message: format!(
                        "internal: kernels built for {user}={v} were run at {user}={}",
                        sizes.get(user).map_or("(none)".into(), |x| x.to_string())
                    ),
                    notes: vec![codegen_opencl::BUG_NOTE.into()],
                });
            }
        }
        for (c, cap) in &plan.capacities {
            let v = env.eval(cap, "the capacity")?;
            env.values.insert(c.clone(), v as i64);
        }
        Ok(env)
    }

    pub(crate) fn eval(&self, e: &arith::ArithExpr, what: &str) -> Result<usize, Error> {
        let v = e
            .eval(&|n| self.values.get(n).copied())
            .map_err(|err| Error::plain(format!("cannot evaluate {what} {e}: {err}")))?;
        usize::try_from(v).map_err(|_| Error::plain(format!("{what} {e} is negative ({v})")))
    }
}

/// Splits a type into its array lengths (evaluated at the user's sizes) and element type.
pub(crate) fn shape(t: &Type, sizes: &BTreeMap<String, i64>) -> Result<(Vec<usize>, Type), Error> {
    let (dims, elem) = memalloc::dims_of(t);
    let dims = dims
        .iter()
        .map(|d| {
            d.eval(&|n| sizes.get(n).copied())
                .map_err(|e| Error::plain(format!("cannot evaluate the result length {d}: {e}")))
                .and_then(|v| usize::try_from(v).map_err(|_| Error::plain(format!("negative length {d}"))))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((dims, elem))
}

/// A failure of the OpenCL run; the driver refusing kernels we generated is our bug.
pub(crate) fn run_error(e: host_runner::Error) -> Error {
    match e {
        host_runner::Error::Build { log } => Error::Plain {
            message: "the OpenCL driver could not build the generated kernels".into(),
            notes: vec![
                format!("build log:\n{log}"),
                "run `lift compile` on the program to see the generated source".into(),
                codegen_opencl::BUG_NOTE.into(),
            ],
        },
        e => Error::plain(e.to_string()),
    }
}

/// The error of a failed device-side check of a filter result's length `n`: where the length is
/// consumed, and where the filter is.
pub(crate) fn length_check_error(c: &codegen_opencl::LengthCheck, env: &Env, n: i32) -> Error {
    let lookup = |v: &str| {
        if v == c.length.0 {
            Some(i64::from(n))
        } else {
            env.values.get(v).copied()
        }
    };
    let is_length = |e: &arith::ArithExpr| e.as_var().is_some_and(|(v, _)| v == c.length.0);
    let (message, label) = match &c.check.kind {
        typeck::CheckKind::Divisible { len, by, what } => {
            let b = by.eval(&lookup).unwrap_or(0);
            let message = if is_length(len) {
                format!("the result of filterGlb has {n} elements, not a multiple of {b} as {what} needs")
            } else {
                let l = len.eval(&lookup).unwrap_or(0);
                format!("the result of filterGlb has {n} elements, so {what} gets {l}, not a multiple of {b}")
            };
            (message, format!("{what} needs a multiple of {b}"))
        }
        typeck::CheckKind::AtLeast { len, min, what } => {
            let m = min.eval(&lookup).unwrap_or(0);
            let message = if is_length(len) {
                format!("the result of filterGlb has {n} elements, fewer than the {m} that {what} needs")
            } else {
                let l = len.eval(&lookup).unwrap_or(0);
                format!("the result of filterGlb has {n} elements, so {what} gets {l}, fewer than {m}")
            };
            (message, format!("{what} needs at least {m}"))
        }
        typeck::CheckKind::Fits { len } => (format!("the length {len} does not fit a 64-bit integer"), String::new()),
    };
    Error::Invalid(vec![
        Diagnostic::new(c.check.span, format!("{message} (detected on the device)")).with_label(label),
        Diagnostic::new(c.filter, format!("the filterGlb whose result has {n} elements"))
            .with_label(format!("kept {n} elements")),
    ])
}

/// The launch of kernel `k` at the sizes in `env`: `buffer` binds a plan buffer, `flag` is the
/// error flag's binding and `param` a scalar parameter's (the one translation of the plan's
/// arguments, whether the buffers are a run's, a host unit's or a resident program's).
pub(crate) fn launch_of(
    plan: &KernelPlan,
    k: &codegen_opencl::Kernel,
    env: &Env,
    flag: host_runner::KernelArg,
    mut buffer: impl FnMut(usize) -> Result<host_runner::KernelArg, Error>,
    mut param: impl FnMut(usize) -> Result<host_runner::KernelArg, Error>,
) -> Result<Launch, Error> {
    let mut args = Vec::with_capacity(k.args.len());
    for a in &k.args {
        args.push(match a {
            KernelArg::Buffer(b) => buffer(*b)?,
            KernelArg::ErrorFlag => flag,
            KernelArg::Local(b) => {
                let b = &plan.memory.buffers[*b];
                let n = env.eval(&b.len, &format!("the length of local array {}", b.name))?;
                let (esz, _) = layout(&b.elem);
                host_runner::KernelArg::Local(
                    n.checked_mul(esz)
                        .ok_or_else(|| Error::plain(format!("local array {} is too large", b.name)))?,
                )
            }
            KernelArg::Size(c) => host_runner::KernelArg::I32(
                i32::try_from(env.values[c]).map_err(|_| Error::plain(format!("size {c} does not fit an int")))?,
            ),
            KernelArg::Param(p) => param(*p)?,
        });
    }
    let global = k
        .global
        .iter()
        .map(|g| env.eval(g, "the global size"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Launch {
        kernel: k.name.clone(),
        args,
        global,
        local: k.local.clone(),
    })
}

/// The int at the start of a resident buffer (a filter result's length); `None`: the plan has
/// no storage for it, which is our bug.
pub(crate) fn read_int(session: &host_runner::Session, r: Option<host_runner::Resident>) -> Result<i32, Error> {
    let r = r.ok_or_else(|| {
        Error::plain(format!(
            "internal: a checked length has no buffer\n{}",
            codegen_opencl::BUG_NOTE
        ))
    })?;
    let b = session.read_resident(r, 0, 4).map_err(run_error)?;
    Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A scalar parameter as a kernel argument.
pub(crate) fn scalar_arg(v: &Value) -> Result<host_runner::KernelArg, Error> {
    Ok(match v {
        Value::Float(f) => host_runner::KernelArg::F32(*f),
        Value::Double(d) => host_runner::KernelArg::F64(*d),
        Value::Int(i) => host_runner::KernelArg::I32(*i),
        Value::Bool(b) => host_runner::KernelArg::I32(i32::from(*b)),
        Value::Uint(u) => host_runner::KernelArg::U32(*u),
        Value::Long(l) => host_runner::KernelArg::I64(*l),
        Value::Ulong(u) => host_runner::KernelArg::U64(*u),
        v => return Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
    })
}

/// The error a kernel's flag reports, whichever check set it: a condition on a filter result's
/// length (`read_length` reads that length from the plan buffer, by index, that holds it) or an
/// `at` bounds check. Every path that runs kernels decodes its flag here, so a check fails with
/// the same message in `lift run`, a host section and a resident program.
pub(crate) fn flag_error(
    plan: &KernelPlan,
    flag: i32,
    env: &Env,
    read_length: impl FnOnce(usize) -> Result<i32, Error>,
) -> Result<(), Error> {
    if let Some(c) = plan.length_checks.iter().find(|c| c.flag as i32 + 1 == flag) {
        let n = read_length(c.length.1)?;
        return Err(length_check_error(c, env, n));
    }
    at_check(plan, flag)
}

/// The error of a kernel's flag when an `at` bounds check or a divisor's test for zero failed
/// (flag `i + 1` names the plan's check `i`).
pub(crate) fn at_check(plan: &KernelPlan, flag: i32) -> Result<(), Error> {
    if flag <= 0 {
        return Ok(());
    }
    let site = (flag - 1) as usize;
    let span = plan.checks.get(site).copied().unwrap_or_default();
    let message = if plan.division_checks.contains(&site) {
        "integer division by zero (detected on the device)"
    } else {
        "index out of range in `at` (detected on the device)"
    };
    Err(Error::Source(Diagnostic::new(span, message)))
}

#[cfg(test)]
mod build_error_tests {
    use super::*;

    #[test]
    fn a_driver_refusing_generated_code_is_reported_as_our_bug() {
        let e = run_error(host_runner::Error::Build {
            log: "k.cl:1:1: error: boom".into(),
        });
        let text = e.render("p.lisp", "");
        assert!(text.contains("could not build the generated kernels"), "{text}");
        assert!(text.contains("k.cl:1:1: error: boom"), "{text}");
        assert!(text.contains(codegen_opencl::BUG_NOTE), "{text}");
    }
}
