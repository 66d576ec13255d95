//! The variants mode: a high-level program run as the variants that rewriting makes of it, each
//! compared with the interpreter's value of the program as written.
//!
//! `lift tune` times the cost model's first variants and then others of the explored space, and
//! keeps the fastest: a wrong variant is a silently wrong result. So each case explores the
//! program as `lift tune` does (`rewrite::explore`, sizes known and built in; or, one case in
//! four, sizes unknown, as `lift explore` without `--size` and `lift compile` see it, with
//! generic kernels and their run-time size checks), takes the model's first `top` variants and
//! `random` others of the explored pool (some at another `mapGlb` work-group size, as the tune's
//! search tries), compiles each as `tune` measures it and runs it on the device. A variant
//! refused cleanly (its size checks, validation) is counted; the first defect (a panic, an
//! internal error, a driver build error, a different value) is the case's verdict, and a
//! different value is told apart by the variant's own interpretation: a rewrite that changed
//! the program's meaning, or kernels that differ from the variant they were made from.

use crate::api::{self, Session, Stage};
use crate::oracle::{self, Class, Verdict};
use ir::rng::XorShift;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How a case's variants are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// The cost model's first variants, at the default work-group size (`lift tune`'s seeds).
    pub top: usize,
    /// Other variants of the explored pool, picked at random.
    pub random: usize,
    /// Explore with no size known and run generic kernels.
    pub symbolic: bool,
    /// The seed of the random picks.
    pub pick: u64,
}

/// Variants kept from exploration, that the random ones are picked from.
const POOL: usize = 64;

// The `mapGlb` work-group sizes a random variant may run with are those `lift tune`'s search tries.
use lift::tune::WORK_GROUPS;

impl Mode {
    /// The mode of case `index` of run `seed`: sizes unknown one time in four.
    pub fn of_case(seed: u64, index: u64, top: usize, random: usize) -> Mode {
        let mut rng = XorShift::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ index.rotate_left(29) ^ 0x7661_7273);
        Mode {
            top,
            random,
            symbolic: rng.below(4) == 0,
            pick: rng.next_u64(),
        }
    }

    pub fn to_json(self) -> serde_json::Value {
        serde_json::json!({ "top": self.top, "random": self.random, "symbolic": self.symbolic, "pick": self.pick })
    }

    pub fn from_json(v: &serde_json::Value) -> Option<Mode> {
        Some(Mode {
            top: v.get("top")?.as_u64()? as usize,
            random: v.get("random")?.as_u64()? as usize,
            symbolic: v.get("symbolic")?.as_bool()?,
            pick: v.get("pick")?.as_u64()?,
        })
    }

    /// The `difffuzz eval` flags that evaluate a case in this mode again.
    pub fn flags(self) -> String {
        format!(
            "--variants {} --random {} --symbolic {} --pick {}",
            self.top,
            self.random,
            u8::from(self.symbolic),
            self.pick
        )
    }

    /// The variants to run of `n` explored ones: (index in the model's order, work-group size).
    pub fn choose(self, n: usize) -> Vec<(usize, Vec<usize>)> {
        let mut out: Vec<(usize, Vec<usize>)> = (0..self.top.min(n)).map(|i| (i, vec![])).collect();
        let mut rest: Vec<usize> = (self.top.min(n)..n).collect();
        let mut rng = XorShift::new(self.pick);
        for _ in 0..self.random {
            if rest.is_empty() {
                break;
            }
            let i = rest.swap_remove(rng.below(rest.len()));
            let wg = if rng.below(2) == 0 {
                vec![]
            } else {
                WORK_GROUPS[rng.below(WORK_GROUPS.len())].to_vec()
            };
            out.push((i, wg));
        }
        out
    }
}

/// What happened to the variants of the cases evaluated (summed over a campaign).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases whose program was explored.
    pub explored: u64,
    /// Extracted terms whose lowering, type checking or validation refused, by reason
    /// (`explore` drops them before any variant is kept).
    pub rejected: BTreeMap<String, u64>,
    /// Variants compiled and run.
    pub run: u64,
    pub agree: u64,
    pub unbounded: u64,
    /// Variants refused cleanly, by message.
    pub refused: BTreeMap<String, u64>,
    /// Variants with a defect (each case stops at its first).
    pub defects: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.explored += o.explored;
        for (k, n) in &o.rejected {
            *self.rejected.entry(k.clone()).or_default() += n;
        }
        self.run += o.run;
        self.agree += o.agree;
        self.unbounded += o.unbounded;
        self.defects += o.defects;
        for (k, n) in &o.refused {
            *self.refused.entry(k.clone()).or_default() += n;
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "explored": self.explored, "rejected": self.rejected, "run": self.run,
            "agree": self.agree, "unbounded": self.unbounded, "defects": self.defects,
            "refused": self.refused,
        })
    }

    pub fn from_json(v: &serde_json::Value) -> Option<Counts> {
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64);
        let map = |k: &str| -> Option<BTreeMap<String, u64>> {
            Some(
                v.get(k)?
                    .as_object()?
                    .iter()
                    .filter_map(|(k, n)| Some((k.clone(), n.as_u64()?)))
                    .collect(),
            )
        };
        Some(Counts {
            explored: n("explored")?,
            rejected: map("rejected")?,
            run: n("run")?,
            agree: n("agree")?,
            unbounded: n("unbounded")?,
            defects: n("defects")?,
            refused: map("refused")?,
        })
    }

    /// Lines for a summary.
    pub fn render(&self) -> String {
        let refused: u64 = self.refused.values().sum();
        let rejected: u64 = self.rejected.values().sum();
        let mut out = format!(
            "variants: {} program(s) explored; {} variant(s) run: {} agree, {} refused cleanly, {} unbounded, {} defect(s)\n",
            self.explored, self.run, self.agree, refused, self.unbounded, self.defects
        );
        let list = |out: &mut String, m: &BTreeMap<String, u64>| {
            let mut by: Vec<_> = m.iter().collect();
            by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (msg, n) in by {
                out.push_str(&format!("  {n:6}  {msg}\n"));
            }
        };
        list(&mut out, &self.refused);
        out.push_str(&format!(
            "extracted terms that exploration dropped (lowering, types, validation): {rejected}\n"
        ));
        list(&mut out, &self.rejected);
        out
    }
}

/// The verdict on the variants of one case, with their counts; a panic is a `crash` verdict.
pub fn evaluate(src: &str, data: &str, device: Option<&str>, mode: Mode) -> Verdict {
    catch_unwind(AssertUnwindSafe(|| evaluate_unguarded(src, data, device, mode)))
        .unwrap_or_else(|p| oracle::crash(p, " (in exploring or running a variant)"))
}

fn clean(message: &str, counts: Counts) -> Verdict {
    let mut v = Verdict::new(Class::CleanError, oracle::normalize(message), message.to_string());
    v.counts = Some(counts);
    v
}

fn evaluate_unguarded(src: &str, data: &str, device: Option<&str>, mode: Mode) -> Verdict {
    let mut counts = Counts::default();
    let expected = api::interpret(src, data, false);
    if let Err(r) = &expected {
        if r.step_limit {
            return Verdict::new(Class::Timeout, "interpreter step limit", r.message.clone());
        }
        if r.stage == Stage::Front || r.stage == Stage::Data {
            return clean(&r.message, counts);
        }
    }
    let session = match Session::new(src, data) {
        Ok(s) => s,
        Err(r) => return clean(&r.message, counts),
    };
    let explored = match session.explore(mode.symbolic, POOL) {
        Ok(e) => e,
        Err(r) if r.message.trim_start().starts_with("internal:") => {
            return Verdict::new(Class::Internal, oracle::normalize(&r.message), r.message)
        }
        // "found no variant that compiles": `lift run` then compiles the program as written
        Err(r) => return clean(&r.message, counts),
    };
    counts.explored = 1;
    for why in &explored.rejections {
        *counts.rejected.entry(oracle::normalize(why)).or_default() += 1;
    }
    let n = explored.variants.len();
    let mut first_refusal: Option<String> = None;
    for (i, wg) in mode.choose(n) {
        let var = &explored.variants[i];
        counts.run += 1;
        let got = session.run(&var.program, mode.symbolic, &wg, device);
        let mut v = oracle::compare(src, data, &expected, got);
        match v.class {
            Class::Agree => counts.agree += 1,
            Class::Unbounded => counts.unbounded += 1,
            Class::CleanError => {
                *counts.refused.entry(v.signature.clone()).or_default() += 1;
                first_refusal.get_or_insert(v.signature.clone());
            }
            Class::Wrong | Class::Internal | Class::Driver | Class::Crash | Class::Timeout | Class::Oclgrind => {
                counts.defects += 1;
                if v.class == Class::Wrong {
                    v.signature = wrong_where(&session, var, &expected, src, data);
                }
                let random = if i < mode.top { "" } else { ", picked at random" };
                let wg_text = if wg.is_empty() {
                    "default".to_string()
                } else {
                    wg.iter().map(usize::to_string).collect::<Vec<_>>().join("×")
                };
                v.detail = format!(
                    "variant {i} of {n} in the cost model's order{random} (sizes {}, mapGlb work-group {wg_text}): {}\n{}\nthe variant:\n{}",
                    if mode.symbolic { "unknown" } else { "known and built in" },
                    var.description,
                    v.detail,
                    var.source
                );
                v.variant = Some(var.source.clone());
                v.counts = Some(counts);
                return v;
            }
        }
    }
    let class = if counts.agree + counts.unbounded == 0 {
        match first_refusal {
            Some(msg) => return clean(&msg, counts),
            None => Class::Agree,
        }
    } else if counts.unbounded > 0 {
        Class::Unbounded
    } else {
        Class::Agree
    };
    let mut v = Verdict::new(
        class,
        if class == Class::Unbounded {
            "no float32 error bound"
        } else {
            ""
        },
        "",
    );
    v.counts = Some(counts);
    v
}

/// The signature of a variant whose value differs: where the difference comes from, by the
/// variant's own value on the interpreter.
fn wrong_where(
    session: &Session,
    var: &api::Variant,
    expected: &Result<ir::interp::Value, api::Refusal>,
    src: &str,
    data: &str,
) -> String {
    let Ok(want) = expected else {
        return "different results of a variant: the program as written fails on the interpreter".into();
    };
    match session.interpret(&var.program) {
        Err(e) => format!(
            "different results of a variant: the rewritten program fails on the interpreter: {}",
            oracle::normalize(&e.message)
        ),
        Ok(own) => {
            let same = matches!(
                oracle::compare(src, data, expected, Ok(own.clone())).class,
                Class::Agree | Class::Unbounded
            ) || api::close(want, &own);
            if same {
                "different results of a variant: its kernels differ from its interpretation (lowering or code generation)"
                    .into()
            } else {
                "different results of a variant: the rewritten program means something else (a rewrite rule)".into()
            }
        }
    }
}
