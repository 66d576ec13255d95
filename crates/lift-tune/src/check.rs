//! Checking a variant's result against the reference interpreter: bounded interpretation, and
//! the comparison with float32 error bounds for each variant's order of evaluation ([`Check`]).

use crate::*;
use ir::interp::Value;
use std::fmt::Write as _;

pub(crate) fn check_to_json(c: &Check) -> serde_json::Value {
    match c {
        Check::Ok { bound, used } => serde_json::json!({ "ok": { "bound": bound, "used": used } }),
        Check::Wrong(why) => serde_json::json!({ "wrong": why }),
        Check::Unchecked(why) => serde_json::json!({ "unchecked": why }),
        Check::NotRun => serde_json::json!("not run"),
    }
}

pub(crate) fn check_from_json(v: &serde_json::Value) -> Option<Check> {
    if v.as_str() == Some("not run") {
        return Some(Check::NotRun);
    }
    let o = v.as_object()?;
    if let Some(ok) = o.get("ok") {
        return Some(Check::Ok {
            bound: ok.get("bound")?.as_f64()?,
            used: ok.get("used")?.as_f64()?,
        });
    }
    if let Some(w) = o.get("wrong") {
        return Some(Check::Wrong(w.as_str()?.to_string()));
    }
    Some(Check::Unchecked(o.get("unchecked")?.as_str()?.to_string()))
}

/// How a device result compares with the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Every element within its bound. `bound`: the largest bound relative to the largest
    /// element's magnitude; `used`: the largest observed error as a fraction of its bound.
    Ok {
        bound: f64,
        used: f64,
    },
    Wrong(String),
    /// Some element could not be checked, and none is wrong; why.
    Unchecked(String),
    /// The variant did not run.
    NotRun,
}

impl Check {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Check::Ok { .. } => "ok",
            Check::Wrong(_) => "WRONG",
            Check::Unchecked(_) => "unchecked",
            Check::NotRun => "not run",
        }
    }
    pub(crate) fn note(&self) -> String {
        match self {
            Check::Ok { bound, .. } if *bound >= 0.01 => {
                format!("loose check: float32 error bound {:.0}% of the result", bound * 100.0)
            }
            Check::Ok { .. } | Check::NotRun => String::new(),
            Check::Wrong(why) => format!("WRONG RESULT: {why}"),
            Check::Unchecked(why) => format!("unchecked: {why}"),
        }
    }
    pub(crate) fn bound(&self) -> Option<f64> {
        match self {
            Check::Ok { bound, .. } => Some(*bound),
            _ => None,
        }
    }
}

/// Default of `lift tune --check-steps`: interpreter steps allowed per variant (a few minutes on
/// a slow CPU; a sum of 10^8 floats takes about 10^8).
pub const CHECK_STEPS: u64 = 1_000_000_000;

/// The reference interpreter's verdict on one program at the tuning inputs: its value under
/// [`ir::interp::Arith::Bounded`], or why there is none.
pub(crate) type Bounded = Result<Value, Check>;

/// Evaluates one candidate with error bounds. A variant that fails where the program does not
/// is wrong; a step limit or an unbounded comparison leaves it unchecked.
pub fn bounded_eval(src: &str, inputs: &data::Inputs, max_steps: u64) -> Result<Bounded, Error> {
    Ok(bounded_eval_program(
        &compile(src, &Options::types_only())?.given,
        inputs,
        max_steps,
    ))
}

/// [`bounded_eval`] of a parsed program.
pub fn bounded_eval_program(prog: &ir::Program, inputs: &data::Inputs, max_steps: u64) -> Bounded {
    bounded_eval_at(prog, inputs, max_steps, ir::Precision::F32)
}

/// [`bounded_eval_program`] with the device bounds of `precision` (`--precision tf32`: every
/// `float` product's operands possibly rounded to TF32).
pub fn bounded_eval_at(prog: &ir::Program, inputs: &data::Inputs, max_steps: u64, precision: ir::Precision) -> Bounded {
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    let opts = ir::interp::Options {
        arith: ir::interp::Arith::Bounded,
        max_steps: Some(max_steps),
        precision,
    };
    match ir::interp::eval_with(prog, &inputs.values, &lookup, &opts) {
        Ok(v) => Ok(v),
        Err(e) => Err(match e.kind {
            ir::interp::ErrorKind::StepLimit => Check::Unchecked(format!(
                "the interpreter needs more than {max_steps} steps (--check-steps)"
            )),
            ir::interp::ErrorKind::Unbounded => Check::Unchecked(format!("no error bound: {}", e.message)),
            ir::interp::ErrorKind::Failure => {
                Check::Wrong(format!("the interpreter fails on this variant: {}", e.message))
            }
        }),
    }
}

/// Checks a device result `got` of a variant against the interpreter: `reference` is the
/// original program under bounded arithmetic, `variant` the variant under it.
///
/// The rule, per floating-point element: with X the exact value of the program, |X - reference|
/// <= own(reference) and, if the variant is a correct rewrite (same X), every OpenCL evaluation
/// D of the variant has |D - X| <= dev(variant), a bound that grows with the lengths of the
/// variant's own reductions and the magnitudes of their terms (see `ir::interp`). So a correct
/// variant always satisfies |D - reference| <= dev(variant) + own(reference): failing it is a
/// wrong result, never rounding. Before that, |variant - reference| <= own(variant) +
/// own(reference) checks the rewrite in (nearly) exact arithmetic, a much tighter test. Integers
/// and booleans must be equal.
pub fn check_result(reference: &Value, variant: &Value, got: &Value) -> Check {
    let mut c = Compare::default();
    c.walk(reference, variant, got, &mut String::new());
    if let Some(w) = c.wrong {
        return Check::Wrong(w);
    }
    if c.unbounded > 0 {
        return Check::Unchecked(format!(
            "{} of {} element(s) have no float32 error bound in this order of evaluation",
            c.unbounded, c.elements
        ));
    }
    let bound = if c.scale > 0.0 { c.bound / c.scale } else { 0.0 };
    if bound >= 1.0 {
        // Sound, but says nothing: any value of the right sign and magnitude would pass.
        return Check::Unchecked(format!(
            "the float32 error bound of this order of evaluation is {bound:.1e} times the result"
        ));
    }
    Check::Ok { bound, used: c.used }
}

#[derive(Default)]
pub(crate) struct Compare {
    pub(crate) elements: usize,
    pub(crate) unbounded: usize,
    /// Largest bound, and largest magnitude of a float element: the result's scale.
    pub(crate) bound: f64,
    pub(crate) scale: f64,
    pub(crate) used: f64,
    pub(crate) wrong: Option<String>,
}

/// Value, own error bound and device error bound of a float (exact when it is a plain input).
pub(crate) fn approx(v: &Value) -> Option<(f64, f64, f64)> {
    match v {
        Value::Float(f) => Some((f64::from(*f), 0.0, 0.0)),
        Value::Double(d) => Some((*d, 0.0, 0.0)),
        Value::Approx(a) => Some((a.value, f64::from(a.own), f64::from(a.dev))),
        _ => None,
    }
}

pub(crate) fn short(x: f64) -> String {
    format!("{x:.9e}")
}

impl Compare {
    pub(crate) fn walk(&mut self, r: &Value, v: &Value, d: &Value, path: &mut String) {
        if self.wrong.is_some() {
            return;
        }
        let at = |path: &str| {
            if path.is_empty() {
                String::new()
            } else {
                format!("element {path}: ")
            }
        };
        match (r, v, d) {
            (Value::Array(rs), Value::Array(vs), Value::Array(ds))
            | (Value::Tuple(rs), Value::Tuple(vs), Value::Tuple(ds))
            | (Value::Vector(rs), Value::Vector(vs), Value::Vector(ds)) => {
                if rs.len() != vs.len() || rs.len() != ds.len() {
                    self.wrong = Some(format!(
                        "{}length {} on the device, {} in the interpreter{}",
                        at(path),
                        ds.len(),
                        rs.len(),
                        if rs.len() == vs.len() {
                            String::new()
                        } else {
                            format!(" ({} for the variant)", vs.len())
                        }
                    ));
                    return;
                }
                let len = path.len();
                for (i, ((r, v), d)) in rs.iter().zip(vs).zip(ds).enumerate() {
                    let _ = write!(path, "[{i}]");
                    self.walk(r, v, d, path);
                    path.truncate(len);
                }
            }
            _ => match (approx(r), approx(v), approx(d)) {
                (Some((x0, own0, _)), Some((xv, ownv, devv)), Some((xd, _, _))) => {
                    self.elements += 1;
                    self.scalar(x0, own0, xv, ownv, devv, xd, &at(path));
                }
                _ if r == v && v == d => self.elements += 1,
                _ => {
                    self.wrong = Some(format!(
                        "{}{} on the device, {} in the interpreter",
                        at(path),
                        d.to_json(),
                        r.to_json()
                    ))
                }
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scalar(&mut self, x0: f64, own0: f64, xv: f64, ownv: f64, devv: f64, xd: f64, at: &str) {
        if !own0.is_finite() || !ownv.is_finite() || !devv.is_finite() {
            self.unbounded += 1;
            return;
        }
        if !x0.is_finite() {
            // Exact operands gave a NaN or an infinity, which every evaluation gives too.
            let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
            if !same(x0, xv) || !same(x0, xd) {
                self.wrong = Some(format!("{at}{xd} on the device, {x0} in the interpreter"));
            }
            return;
        }
        if (xv - x0).abs() > ownv + own0 {
            self.wrong = Some(format!(
                "{at}the variant computes {} in exact arithmetic, the program {} (± {:.1e})",
                short(xv),
                short(x0),
                ownv + own0
            ));
            return;
        }
        let bound = devv + own0;
        let err = (xd - x0).abs();
        if err > bound || xd.is_nan() {
            self.wrong = Some(format!(
                "{at}{} on the device, {} ± {:.2e} (float32 error bound) in the interpreter",
                short(xd),
                short(x0),
                bound
            ));
            return;
        }
        if bound > 0.0 {
            self.used = self.used.max(err / bound);
        }
        self.bound = self.bound.max(bound);
        self.scale = self.scale.max(x0.abs());
    }
}

/// A device result against the program's value (`reference`) and the variant's (`value`).
pub(crate) fn judge(reference: &Option<Bounded>, value: &Bounded, got: &Value) -> Check {
    match (reference, value) {
        (Some(Ok(r)), Ok(v)) => check_result(r, v, got),
        (Some(Err(e)), _) => match e {
            Check::Unchecked(why) => Check::Unchecked(format!("{why} (the program itself)")),
            other => other.clone(),
        },
        (_, Err(e)) => e.clone(),
        (None, _) => Check::Unchecked("no reference".into()),
    }
}
