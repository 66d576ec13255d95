//! The oracle: one program on the interpreter and on OpenCL, and a verdict.

use crate::api::{self, Stage};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Equal within the interpreter's error bounds.
    Agree,
    /// Refused with a clean message (by both, or by the compiler alone).
    CleanError,
    /// Different answers, or OpenCL fails at run time where the interpreter has a value.
    Wrong,
    /// A message starting with `internal:`.
    Internal,
    /// A raw OpenCL build log or driver error: generated code the driver refuses.
    Driver,
    /// A panic, or the process died.
    Crash,
    Timeout,
    /// Agreed, but Oclgrind's simulated device reports an out-of-bounds access, a data race,
    /// an uninitialized value, a divergent barrier or an API error in its kernels (the long
    /// run's sample, `crate::oclgrind`).
    Oclgrind,
    /// Different, but only where the interpreter's error analysis bounds nothing: an
    /// ill-conditioned computation (cancellation, a chaotic loop) in which an ulp of difference
    /// in a library function (`sin`, `log`: OpenCL allows a few) or an fma contraction grows
    /// without bound. Not a defect and not an agreement: counted apart, with the first case.
    Unbounded,
}

impl Class {
    pub const ALL: [Class; 9] = [
        Class::Agree,
        Class::CleanError,
        Class::Unbounded,
        Class::Wrong,
        Class::Internal,
        Class::Driver,
        Class::Crash,
        Class::Timeout,
        Class::Oclgrind,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Class::Agree => "agree",
            Class::CleanError => "clean-error",
            Class::Wrong => "wrong",
            Class::Internal => "internal",
            Class::Driver => "driver",
            Class::Crash => "crash",
            Class::Timeout => "timeout",
            Class::Unbounded => "unbounded",
            Class::Oclgrind => "oclgrind",
        }
    }
    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }
    /// A defect of the compiler (everything but agreement and clean refusals).
    pub fn is_defect(self) -> bool {
        !matches!(self, Class::Agree | Class::CleanError | Class::Unbounded)
    }
}

#[derive(Clone, Debug)]
pub struct Verdict {
    pub class: Class,
    /// What identifies "the same failure" when counting and shrinking: the normalized message.
    pub signature: String,
    /// What was observed against what was expected, for the report.
    pub detail: String,
    /// The variants mode: what happened to the case's variants.
    pub counts: Option<crate::variants::Counts>,
    /// The variants mode: the failing variant's program text.
    pub variant: Option<String>,
}

impl Verdict {
    pub fn new(class: Class, signature: impl Into<String>, detail: impl Into<String>) -> Verdict {
        Verdict {
            class,
            signature: signature.into(),
            detail: detail.into(),
            counts: None,
            variant: None,
        }
    }
    /// Fails in the same way as `other` (for shrinking).
    pub fn same_as(&self, other: &Verdict) -> bool {
        self.class == other.class && (self.class == Class::Wrong || self.signature == other.signature)
    }
    pub fn to_json(&self) -> serde_json::Value {
        let mut v =
            serde_json::json!({ "class": self.class.name(), "signature": self.signature, "detail": self.detail });
        if let Some(c) = &self.counts {
            v["counts"] = c.to_json();
        }
        if let Some(s) = &self.variant {
            v["variant"] = serde_json::Value::String(s.clone());
        }
        v
    }
    pub fn from_json(v: &serde_json::Value) -> Option<Verdict> {
        Some(Verdict {
            class: Class::parse(v.get("class")?.as_str()?)?,
            signature: v.get("signature")?.as_str()?.to_string(),
            detail: v.get("detail")?.as_str()?.to_string(),
            counts: v.get("counts").and_then(crate::variants::Counts::from_json),
            variant: v.get("variant").and_then(|s| s.as_str()).map(str::to_string),
        })
    }
}

/// Evaluates one case in this process, turning a panic into a `crash` verdict.
pub fn evaluate(src: &str, data: &str, device: Option<&str>) -> Verdict {
    catch_unwind(AssertUnwindSafe(|| evaluate_unguarded(src, data, device))).unwrap_or_else(|p| crash(p, ""))
}

/// The `crash` verdict of a caught panic; `context` (with its leading space) says where it
/// happened in the full message.
pub fn crash(p: Box<dyn std::any::Any + Send>, context: &str) -> Verdict {
    let msg = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into());
    Verdict::new(
        Class::Crash,
        format!("panic: {}", normalize(&msg)),
        format!("panic{context}: {msg}"),
    )
}

fn short(s: &str) -> String {
    if s.len() > 400 {
        let mut end = 400;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s.to_string()
    }
}

fn evaluate_unguarded(src: &str, data: &str, device: Option<&str>) -> Verdict {
    let expected = api::interpret(src, data, false);
    if let Err(r) = &expected {
        if r.step_limit {
            return Verdict::new(Class::Timeout, "interpreter step limit", r.message.clone());
        }
        if r.stage == Stage::Front || r.stage == Stage::Data {
            // Both sides share the front end and the data loader: a clean refusal of the
            // program as such, nothing to compare.
            return refused(&r.message, "");
        }
    }
    let got = api::opencl(src, data, device);
    compare(src, data, &expected, got)
}

/// The verdict on OpenCL's `got` against the interpreter's `expected` for program `src` (whose
/// bounded interpretation decides a difference) on `data`.
pub(crate) fn compare(
    src: &str,
    data: &str,
    expected: &Result<ir::interp::Value, api::Refusal>,
    got: Result<ir::interp::Value, api::Refusal>,
) -> Verdict {
    match (expected, got) {
        (_, Err(r)) if is_internal(&r.message) => Verdict::new(
            Class::Internal,
            normalize(&r.message),
            format!("OpenCL side: {}", short(&r.message)),
        ),
        (_, Err(r)) if is_driver(&r.message) => Verdict::new(
            Class::Driver,
            driver_signature(&r.message),
            format!("OpenCL side: {}", short(&r.message)),
        ),
        (Err(i), Err(o)) => refused(&o.message, &format!("interpreter: {}", i.message)),
        (Ok(v), Err(o)) if o.stage == Stage::Run => Verdict::new(
            Class::Wrong,
            format!("fails on OpenCL only: {}", normalize(&o.message)),
            format!(
                "expected (interpreter) {}\nobserved (OpenCL) error: {}",
                short(&api::json(v)),
                short(&o.message)
            ),
        ),
        (Ok(_), Err(o)) => refused(&o.message, "the interpreter runs it"),
        (Err(i), Ok(v)) => Verdict::new(
            Class::Wrong,
            format!("fails on the interpreter only: {}", normalize(&i.message)),
            format!(
                "expected (interpreter) error: {}\nobserved (OpenCL) {}",
                i.message,
                short(&api::json(&v))
            ),
        ),
        (Ok(want), Ok(got)) => {
            if api::close(want, &got) {
                return Verdict::new(Class::Agree, "", "");
            }
            // Not equal to the float32 evaluation in program order: maybe still within the
            // error bounds of an order OpenCL allows (a reduction reassociated, an fma).
            let note = match api::interpret(src, data, true).map(|b| api::within_bounds(&b, &got)) {
                Ok(Ok(true)) => return Verdict::new(Class::Agree, "", ""),
                Ok(Ok(false)) => "outside the float32 error bounds".to_string(),
                // Every element that has a bound is within it (`within_bounds` says wrong
                // otherwise); the others have none.
                Ok(Err(why)) => {
                    return Verdict::new(
                        Class::Unbounded,
                        "no float32 error bound",
                        format!(
                            "expected (interpreter) {}\nobserved (OpenCL)      {}\n({why})",
                            short(&api::json(want)),
                            short(&api::json(&got))
                        ),
                    )
                }
                // A decision (`to-int`, a comparison steering `if` or a loop) that rounding
                // can change: no order-independent answer exists, as with an element that
                // has no bound.
                Err(r) if r.message.starts_with("unbounded: ") => {
                    return Verdict::new(
                        Class::Unbounded,
                        "no float32 error bound",
                        format!(
                            "expected (interpreter) {}\nobserved (OpenCL)      {}\n({})",
                            short(&api::json(want)),
                            short(&api::json(&got)),
                            r.message
                        ),
                    )
                }
                Err(r) => format!("no bounded evaluation ({})", r.message),
            };
            Verdict::new(
                Class::Wrong,
                "different results",
                format!(
                    "expected (interpreter) {}\nobserved (OpenCL)      {}\n({note})",
                    short(&api::json(want)),
                    short(&api::json(&got))
                ),
            )
        }
    }
}

fn refused(message: &str, note: &str) -> Verdict {
    Verdict::new(
        Class::CleanError,
        normalize(message),
        format!("{}\n{note}", short(message)),
    )
}

fn is_internal(message: &str) -> bool {
    message.trim_start().starts_with("internal:")
}

/// Messages that come from the OpenCL implementation rather than from our compiler: a build
/// log, a failing OpenCL call, a launch the device refuses.
fn is_driver(message: &str) -> bool {
    message.contains("failed to build; build log")
        || message.contains("driver could not build")
        || message.starts_with("OpenCL call ")
        || message.contains("has an invalid NDRange")
        || message.starts_with("invalid launch plan")
}

/// The first error line of a build log, normalized; else the normalized message.
fn driver_signature(message: &str) -> String {
    if let Some(line) = message.lines().find(|l| l.contains("error:")) {
        // `error: /tmp/.../tempfile_x1y2.cl:7:44: what`: the place differs every time.
        let what = line.find(".cl:").map_or(line, |at| {
            let rest = &line[at + 4..];
            rest.find(": ").map_or(rest, |k| &rest[k + 2..])
        });
        return format!("build: {}", normalize(what));
    }
    normalize(message)
}

/// One line, digits and generated names folded, so that messages differing only in the
/// program's names or sizes count as one.
pub fn normalize(message: &str) -> String {
    let line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut out = String::new();
    let mut last_digit = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
        } else {
            out.push(c);
            last_digit = false;
        }
    }
    // Quoted program text (`...`) differs between programs: keep only its first word.
    let mut res = String::new();
    let mut rest = out.as_str();
    while let Some(a) = rest.find('`') {
        res.push_str(&rest[..=a]);
        let after = &rest[a + 1..];
        match after.find('`') {
            Some(b) => {
                let quoted = &after[..b];
                let head: String = quoted.chars().take(24).collect();
                res.push_str(&head);
                if quoted.chars().count() > 24 {
                    res.push('…');
                }
                res.push('`');
                rest = &after[b + 1..];
            }
            None => {
                rest = after;
            }
        }
    }
    res.push_str(rest);
    res.chars().take(140).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_that_differ_only_in_names_and_numbers_count_as_one() {
        assert_eq!(
            normalize("split #4 of an array of length 7 (N): 7 is not a multiple of 4\nnote"),
            normalize("split #2 of an array of length 13 (N): 13 is not a multiple of 2")
        );
        assert_eq!(normalize("unknown name `x12`"), "unknown name `x#`");
    }

    #[test]
    fn build_logs_are_named_by_their_first_error_without_the_temporary_file() {
        let log = "the OpenCL driver could not build the generated kernels\nbuild log:\n\
                   error: /root/.cache/pocl/kcache/tempfile_ab1c.cl:7:44: expression is not assignable\n\
                   error: /root/.cache/pocl/kcache/tempfile_ab1c.cl:9:1: something else";
        assert!(is_driver(log));
        assert_eq!(driver_signature(log), "build: expression is not assignable");
        assert!(!is_driver("internal: a view was read with too few indices"));
        assert!(is_internal("internal: a view was read with too few indices"));
    }
}
