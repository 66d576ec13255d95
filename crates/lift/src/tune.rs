//! `lift explore` and `lift tune`: rewrite exploration (crate `rewrite`) and autotuning sweeps of
//! its variants across OpenCL devices, with a tuning cache of the best variant per program,
//! sizes and device.

use crate::{backend, compile, compile_program, data, parse_sizes, verify_checks, Error, Options};
use ir::interp::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

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

/// FNV-1a, 64 bit: stable across Rust releases, so cache keys survive rebuilds.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn sizes_text(sizes: &BTreeMap<String, i64>) -> String {
    sizes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn cache_key(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str) -> String {
    format!("{:016x}|{}|{device_name}", fnv1a64(src.as_bytes()), sizes_text(sizes))
}

fn cache_path() -> Option<PathBuf> {
    host_runner::default_cache_dir().map(|d| d.join("tuning.json"))
}

fn read_cache(path: &Path) -> serde_json::Map<String, serde_json::Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// The tuned best variant (LIFT source) of `src` at `sizes` on the device named `device_name`.
pub fn best_variant(src: &str, sizes: &[String], device_name: &str) -> Option<String> {
    best_entry(src, sizes, device_name).map(|(source, _)| source)
}

/// The tuned best variant's source and description (empty for caches of older versions).
pub fn best_entry(src: &str, sizes: &[String], device_name: &str) -> Option<(String, String)> {
    tuned_entry(src, sizes, device_name).map(|t| (t.source, t.description))
}

/// The tuned best configuration of a program at some sizes on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    pub source: String,
    /// Empty for caches of older versions.
    pub description: String,
    /// `mapGlb` work-group size per dimension (empty: the default).
    pub work_group: Vec<usize>,
    /// Timed with the sizes built into the kernels (`false`: as kernel arguments, which was
    /// faster); entries of older versions were all built in, or generic before those.
    pub built_in: bool,
}

/// The tuning cache's best configuration for `src` at `sizes` on the device named `device_name`.
pub fn tuned_entry(src: &str, sizes: &[String], device_name: &str) -> Option<Tuned> {
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes).ok()?.into_iter().collect();
    let cache = read_cache(&cache_path()?);
    let entry = cache.get(&cache_key(src, &sizes, device_name))?;
    let source = entry.get("source")?.as_str()?.to_string();
    let description = entry
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .to_string();
    // an entry of an older version has none: the default
    let work_group = entry
        .get("work_group")
        .and_then(|w| w.as_array())
        .map(|w| w.iter().filter_map(|x| x.as_u64()).map(|x| x as usize).collect())
        .unwrap_or_default();
    let built_in = entry.get("built_in").and_then(|b| b.as_bool()).unwrap_or(true);
    Some(Tuned {
        source,
        description,
        work_group,
        built_in,
    })
}

/// The kernel time (ms) of the tuned best configuration of `src` at `sizes` on the device named
/// `device_name`, as `lift tune` measured it (`--devices` splits in proportion to it).
pub fn tuned_ms(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str) -> Option<f64> {
    let cache = read_cache(&cache_path()?);
    cache
        .get(&cache_key(src, sizes, device_name))?
        .get("median_ms")?
        .as_f64()
}

/// An entry of the tuning cache by its whole key (`--devices` keeps its calibrations there).
pub fn cached(key: &str) -> Option<serde_json::Value> {
    read_cache(&cache_path()?).get(key).cloned()
}

/// Stores an entry of the tuning cache under its whole key.
pub fn store_cached(key: &str, value: serde_json::Value) {
    update_cache(|cache| {
        cache.insert(key.to_string(), value);
    });
}

/// A key part for a program text (its FNV-1a hash) and sizes.
pub fn program_key(src: &str, sizes: &BTreeMap<String, i64>) -> String {
    format!("{:016x}|{}", fnv1a64(src.as_bytes()), sizes_text(sizes))
}

fn store_best(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str, entry: serde_json::Value) {
    update_cache(|cache| {
        cache.insert(cache_key(src, sizes, device_name), entry);
    });
}

/// Read-modify-write of the tuning cache. The new file is written next to the old one and
/// renamed over it, so a reader, or a run killed half-way through the write, never sees half
/// a file. Failures are ignored: the cache only saves time.
fn update_cache(change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    // The devices of one tune record their measurements from threads of their own: one
    // read-modify-write at a time, or one would write over what another just added.
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(path) = cache_path() else { return };
    let mut cache = read_cache(&path);
    change(&mut cache);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(cache)).unwrap_or_default();
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Each variant's measurement, recorded in the tuning cache as soon as it is taken, so that a
/// run that is interrupted (Ctrl-C, killed, a hung kernel, a lost device) loses nothing, and
/// the next run of the same program at the same sizes skips what is already measured on the
/// same device. Only results of variants that ran are kept: a failure may be the device's,
/// and is tried again.
struct Record {
    /// `measured|<program key>` without the device part.
    key: String,
    /// The cache as this run found it: a run resumes what earlier runs measured, not what
    /// another of its devices (the same device named twice) measured a moment ago.
    earlier: serde_json::Map<String, serde_json::Value>,
}

impl Record {
    fn new(src: &str, sizes: &BTreeMap<String, i64>) -> Record {
        Record {
            key: format!("measured|{:016x}|{}", fnv1a64(src.as_bytes()), sizes_text(sizes)),
            earlier: cache_path().map(|p| read_cache(&p)).unwrap_or_default(),
        }
    }

    fn slot(&self, device_name: &str) -> String {
        format!("{}|{device_name}", self.key)
    }

    /// A configuration's key: its variant's source and `mapGlb` work-group size (the default's
    /// key is the source's alone, as before work-group sizes were tuned).
    fn config_key(source: &str, work_group: &[usize]) -> String {
        let text = if work_group.is_empty() {
            source.to_string()
        } else {
            format!("{source}|work-group {}", work_group_text(work_group))
        };
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }

    /// The recorded measurement of a configuration (by [`Record::config_key`]) on the device.
    fn lookup(&self, device_name: &str, key: &str) -> Option<(f64, Check)> {
        let entry = self.earlier.get(&self.slot(device_name))?.get(key)?;
        let ms = entry.get("median_ms")?.as_f64()?;
        Some((ms, check_from_json(entry.get("check")?)?))
    }

    fn store(&self, device_name: &str, key: &str, ms: f64, check: &Check) {
        let slot = self.slot(device_name);
        update_cache(|cache| {
            let entry = cache
                .entry(slot)
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if !entry.is_object() {
                *entry = serde_json::Value::Object(serde_json::Map::new());
            }
            if let Some(map) = entry.as_object_mut() {
                map.insert(
                    key.to_string(),
                    serde_json::json!({ "median_ms": ms, "check": check_to_json(check) }),
                );
            }
        });
    }
}

fn check_to_json(c: &Check) -> serde_json::Value {
    match c {
        Check::Ok { bound, used } => serde_json::json!({ "ok": { "bound": bound, "used": used } }),
        Check::Wrong(why) => serde_json::json!({ "wrong": why }),
        Check::Unchecked(why) => serde_json::json!({ "unchecked": why }),
        Check::NotRun => serde_json::json!("not run"),
    }
}

fn check_from_json(v: &serde_json::Value) -> Option<Check> {
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
    fn label(&self) -> &'static str {
        match self {
            Check::Ok { .. } => "ok",
            Check::Wrong(_) => "WRONG",
            Check::Unchecked(_) => "unchecked",
            Check::NotRun => "not run",
        }
    }
    fn note(&self) -> String {
        match self {
            Check::Ok { bound, .. } if *bound >= 0.01 => {
                format!("loose check: float32 error bound {:.0}% of the result", bound * 100.0)
            }
            Check::Ok { .. } | Check::NotRun => String::new(),
            Check::Wrong(why) => format!("WRONG RESULT: {why}"),
            Check::Unchecked(why) => format!("unchecked: {why}"),
        }
    }
    fn bound(&self) -> Option<f64> {
        match self {
            Check::Ok { bound, .. } => Some(*bound),
            _ => None,
        }
    }
}

/// One measured configuration (variant and work-group size) on one device.
struct Row {
    /// When its measurement started and ended, in seconds from the start of the tune (both 0
    /// for a result resumed from the cache): the table shows the devices sweeping at once.
    started_s: f64,
    ended_s: f64,
    device: String,
    device_index: usize,
    variant: usize,
    /// `mapGlb` work-group size (empty: the default).
    work_group: Vec<usize>,
    /// The order in which the search tried it on its device, from 1.
    try_no: usize,
    /// How the search came to it.
    found_by: &'static str,
    median_ms: Option<f64>,
    check: Check,
    /// Why it did not run, when it did not.
    error: String,
    description: String,
    /// Taken from the tuning cache (an earlier run).
    resumed: bool,
    /// Seconds its measurement took in this run: compiling, building, copying, timing (not
    /// interpreting); what re-timing it will cost is estimated from it.
    secs: f64,
    /// Run once only, as it was already this many times the best so far.
    cut: Option<f64>,
    /// The sizes built into its kernels (`Options::specialise`); `false`: kernel arguments,
    /// timed for the leaders only (see [`ALTERNATIVES`]).
    built_in: bool,
}

impl Row {
    fn correct(&self) -> bool {
        matches!(self.check, Check::Ok { .. })
    }
    fn note(&self) -> String {
        let note = match &self.check {
            Check::NotRun => format!("skipped: {}", self.error),
            c => c.note(),
        };
        let note = match (self.built_in, note.is_empty()) {
            (true, _) => note,
            (false, true) => SIZES_AS_ARGUMENTS.to_string(),
            (false, false) => format!("{SIZES_AS_ARGUMENTS}; {note}"),
        };
        match self.cut {
            Some(x) => {
                let cut = format!("one run: {x:.1}x the best so far");
                if note.is_empty() {
                    cut
                } else {
                    format!("{note}; {cut}")
                }
            }
            None => note,
        }
    }
    /// Not compared with the interpreter because a search found it slower than a checked one.
    fn deferred(&self) -> bool {
        matches!(&self.check, Check::Unchecked(why) if why.starts_with(DEFERRED))
    }
    /// Usable as the tuned best: it ran and is not known to be wrong.
    fn usable(&self) -> bool {
        self.median_ms.is_some() && !matches!(self.check, Check::Wrong(_) | Check::NotRun)
    }
    /// Checked rows first, then unchecked ones, each by time (sizes as kernel arguments
    /// handicapped by [`ARGUMENTS_MARGIN`]); then those that did not run.
    fn rank_key(&self) -> (u8, f64) {
        let ms = self.median_ms.unwrap_or(f64::INFINITY) * if self.built_in { 1.0 } else { 1.0 + ARGUMENTS_MARGIN };
        match self.check {
            Check::Ok { .. } => (0, ms),
            Check::Unchecked(_) => (1, ms),
            Check::Wrong(_) | Check::NotRun => (2, f64::INFINITY),
        }
    }
}

/// `128` or `16×16`; `default` when empty.
pub fn work_group_text(wg: &[usize]) -> String {
    if wg.is_empty() {
        "default".into()
    } else {
        wg.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("×")
    }
}
/// Default of `lift tune --check-steps`: interpreter steps allowed per variant (a few minutes on
/// a slow CPU; a sum of 10^8 floats takes about 10^8).
pub const CHECK_STEPS: u64 = 1_000_000_000;

/// The reference interpreter's verdict on one program at the tuning inputs: its value under
/// [`ir::interp::Arith::Bounded`], or why there is none.
type Bounded = Result<Value, Check>;

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
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    let opts = ir::interp::Options {
        arith: ir::interp::Arith::Bounded,
        max_steps: Some(max_steps),
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
struct Compare {
    elements: usize,
    unbounded: usize,
    /// Largest bound, and largest magnitude of a float element: the result's scale.
    bound: f64,
    scale: f64,
    used: f64,
    wrong: Option<String>,
}

/// Value, own error bound and device error bound of a float (exact when it is a plain input).
fn approx(v: &Value) -> Option<(f64, f64, f64)> {
    match v {
        Value::Float(f) => Some((f64::from(*f), 0.0, 0.0)),
        Value::Double(d) => Some((*d, 0.0, 0.0)),
        Value::Approx(a) => Some((a.value, f64::from(a.own), f64::from(a.dev))),
        _ => None,
    }
}

fn short(x: f64) -> String {
    format!("{x:.9e}")
}

impl Compare {
    fn walk(&mut self, r: &Value, v: &Value, d: &Value, path: &mut String) {
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
    fn scalar(&mut self, x0: f64, own0: f64, xv: f64, ownv: f64, devv: f64, xd: f64, at: &str) {
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

/// The progress of `lift tune` on stderr (`indicatif`): one line per device, all drawn
/// together by one `MultiProgress` (the devices sweep at once, each in its own thread), and
/// only when stderr is a terminal, so that redirected output and test logs stay clean:
/// configurations tried, the best time so far and, with a budget, the time left in it.
struct Progress {
    bar: indicatif::ProgressBar,
    label: String,
    budget: Option<std::time::Duration>,
    start: std::time::Instant,
    tried: usize,
    best_ms: Option<f64>,
}

/// The display all of a tune's lines are drawn in (hidden when stderr is not a terminal).
fn progress_display() -> indicatif::MultiProgress {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
    } else {
        indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::hidden())
    }
}

impl Progress {
    /// A line of its own (`display`: `None`: the tune's first steps, before the devices'
    /// lines) or one of the display's lines.
    fn new(
        display: Option<&indicatif::MultiProgress>,
        label: &str,
        total: usize,
        budget: Option<std::time::Duration>,
    ) -> Progress {
        use std::io::IsTerminal;
        let len = budget.map_or(total as u64, |b| b.as_millis() as u64);
        let bar = match display {
            _ if !std::io::stderr().is_terminal() => indicatif::ProgressBar::hidden(),
            Some(d) if d.is_hidden() => indicatif::ProgressBar::hidden(),
            Some(d) => d.add(indicatif::ProgressBar::new(len)),
            None => indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr()),
        };
        if !bar.is_hidden() {
            if let Ok(style) = indicatif::ProgressStyle::with_template("[{bar:24}] {elapsed:>4} {msg}") {
                bar.set_style(style.progress_chars("#>-"));
            }
        }
        Progress {
            bar,
            label: label.to_string(),
            budget,
            start: std::time::Instant::now(),
            tried: 0,
            best_ms: None,
        }
    }

    fn show(&self, what: &str) {
        if self.bar.is_hidden() {
            return;
        }
        let what: String = what.chars().take(60).collect();
        let best = self.best_ms.map_or("-".to_string(), |b| format!("{b:.4} ms"));
        let left = match self.budget {
            Some(b) => {
                let left = b.saturating_sub(self.start.elapsed());
                self.bar.set_position(self.start.elapsed().as_millis() as u64);
                format!(", {:.0} s left", left.as_secs_f64())
            }
            None => {
                self.bar.set_position(self.tried as u64);
                String::new()
            }
        };
        self.bar
            .set_message(format!("{}tried {}, best {best}{left}  {what}", self.label, self.tried));
    }

    fn tried(&mut self, ms: Option<f64>) {
        self.tried += 1;
        if let Some(ms) = ms {
            self.best_ms = Some(self.best_ms.map_or(ms, |b| b.min(ms)));
        }
    }

    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Clears the line also when `tune` returns early with an error, before the error is printed.
impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

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
const DEFERRED: &str = "not checked (slower)";

/// A budgeted search checks a configuration against the interpreter only when its first timing
/// is within this factor of the best checked one (or nothing is checked yet).
const COMPETITIVE: f64 = 1.25;

/// Leaders re-timed with the full number of repeats at the end of a budgeted search.
const LEADERS: usize = 3;

/// The best configurations (built for their sizes, as every configuration is timed) that are
/// timed again with the sizes as kernel arguments, where generic kernels are legal: built-in
/// sizes are usually as fast or faster, but not always (convolution_row on the H200, 0.426
/// against 0.396 ms: the PTX differs only in `shl`/`or` against `mul`/`add`), and timing the
/// alternative of every configuration would double the search's cost.
const ALTERNATIVES: usize = 2;

/// A configuration with its sizes as kernel arguments ranks before the same one with them built
/// in only when it is faster by more than this share: within the noise of two timings, the
/// built-in sizes (the default everywhere else) are kept.
const ARGUMENTS_MARGIN: f64 = 0.02;

/// How a configuration timed with its sizes as kernel arguments is named in the report.
const SIZES_AS_ARGUMENTS: &str = "sizes as kernel arguments";

/// Share of the budget the search may start configurations in; the rest is for re-timing the
/// leaders and writing the report.
const SEARCH_SHARE: f64 = 0.85;

/// Without a budget, a configuration whose first run takes more than this factor times the best
/// so far is not run again for its median: it cannot win, and a slow one can take seconds a run.
const SLOW_CUT: f64 = 3.0;

fn slow(ms: f64, best: f64) -> bool {
    ms > best * SLOW_CUT
}

/// Share of a budget that each interpretation (the program's, and each variant's) may take at
/// most, in steps at [`INTERP_STEPS_PER_S`]; a check that needs more is left unchecked.
const CHECK_SHARE: f64 = 0.25;

/// Interpreter steps per second with error bounds, on the slow side (measured on this project's
/// 2-core machine under load: about 1.5e7 for mm's rows × columns); only used to cap the steps
/// a budget's checks may take.
const INTERP_STEPS_PER_S: f64 = 1.0e7;

/// The time a device's search has, and what its steps cost so far, on a clock the search is
/// given (the real one, or a test's): before each configuration it asks whether the estimate
/// of its cost still ends within the budget, and each measurement's time limit ends with it.
struct Budget {
    /// `None`: no budget, every step is admitted.
    total: Option<f64>,
    /// Seconds since the search started.
    clock: Box<dyn Fn() -> f64 + Send + Sync>,
    /// Seconds each configuration measured took (compiling, building, copying and timing), and
    /// the most one of each variant took: variants differ most in build time (a register-blocked
    /// product takes the NVIDIA driver seconds), which its other work-group sizes share.
    trials: Vec<f64>,
    per_variant: BTreeMap<usize, f64>,
    /// Seconds each interpretation of a variant took.
    interps: Vec<f64>,
}

impl Budget {
    fn new(total: Option<std::time::Duration>, clock: Box<dyn Fn() -> f64 + Send + Sync>) -> Budget {
        Budget {
            total: total.map(|t| t.as_secs_f64()),
            clock,
            trials: vec![],
            per_variant: BTreeMap::new(),
            interps: vec![],
        }
    }

    fn median(t: &[f64]) -> f64 {
        let mut t = t.to_vec();
        t.sort_by(f64::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(0.0)
    }

    /// What a configuration seen nowhere yet is expected to cost (the median: the first one
    /// also warms the device up).
    fn typical(&self) -> f64 {
        Budget::median(&self.trials)
    }

    fn typical_interp(&self) -> f64 {
        Budget::median(&self.interps)
    }

    /// What a configuration of `variant` is expected to cost: the most one of its configurations
    /// took, else the typical configuration's.
    fn estimate(&self, variant: usize) -> f64 {
        self.per_variant
            .get(&variant)
            .copied()
            .unwrap_or(0.0)
            .max(self.typical())
    }

    /// What re-timing a configuration with `repeats` runs costs: its first measurement again
    /// (the binary now comes from the cache) and the runs beyond the first.
    fn retime_cost(secs: f64, ms: f64, repeats: usize) -> f64 {
        secs + repeats.saturating_sub(1) as f64 * ms / 1e3
    }

    /// The time limit of measuring a configuration of `variant` (and `extra` seconds of checking
    /// it), or `None` where it would end past the search's share of the budget. The `first`
    /// configuration of a search is measured whatever it may cost (nothing is known yet), but
    /// no measurement's limit ends after the budget.
    fn admit(
        &self,
        variant: usize,
        extra: f64,
        first: bool,
        limit: std::time::Duration,
    ) -> Option<std::time::Duration> {
        (first || self.admits(SEARCH_SHARE, self.estimate(variant) + extra)).then(|| self.limit(limit))
    }

    /// Whether work expected to take `expected` seconds still ends within `share` of the budget.
    fn admits(&self, share: f64, expected: f64) -> bool {
        self.total.is_none_or(|b| (self.clock)() + expected < b * share)
    }

    /// A measurement's time limit: `limit`, and with a budget no later than [`FINISH_SHARE`] of
    /// it (at least a second: the first configuration is measured whatever the budget).
    fn limit(&self, limit: std::time::Duration) -> std::time::Duration {
        match self.total {
            Some(b) => limit.min(std::time::Duration::from_secs_f64(
                (b * FINISH_SHARE - (self.clock)()).max(1.0),
            )),
            None => limit,
        }
    }

    fn trial(&mut self, variant: usize, secs: f64) {
        self.trials.push(secs);
        let v = self.per_variant.entry(variant).or_insert(0.0);
        *v = v.max(secs);
    }

    fn interpreted(&mut self, secs: f64) {
        self.interps.push(secs);
    }
}

/// `LIFT_TUNE_TRACE=1`: when each step of `lift tune` ended, on stderr (where its time goes).
struct Trace {
    start: std::time::Instant,
    on: bool,
}

impl Trace {
    fn new(start: std::time::Instant) -> Trace {
        Trace {
            start,
            on: std::env::var("LIFT_TUNE_TRACE").is_ok_and(|v| !v.is_empty() && v != "0"),
        }
    }

    fn at(&self, what: &str) {
        if self.on {
            eprintln!("[tune {:8.3} s] {what}", self.start.elapsed().as_secs_f64());
        }
    }
}

/// The random inputs of a tune, as values (for the interpreter, and parameters not given as
/// bytes) and as buffer bytes encoded once for every configuration.
struct TuneInputs {
    inputs: data::Inputs,
    bytes: Vec<Option<Vec<u8>>>,
    /// Nothing is compared with the interpreter: results are not decoded.
    skip_result: bool,
}

/// Share of the budget every measurement (a leader's re-timing too) ends in: the rest is for
/// the report, the calibration's refit, writing the cache and the process's exit (a loaded
/// machine's estimates are off by a few tenths of a second; mm at 4096³ on the H200 with
/// `--budget 60s` ended at 60.13 s when a measurement could run to the budget's very end).
const FINISH_SHARE: f64 = 0.95;

/// splitmix64: a small deterministic generator (the search is reproducible for a seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A configuration to try: a candidate (0: the program as written) and a work-group size.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config {
    variant: usize,
    work_group: Vec<usize>,
}

/// The compiled form of a configuration, to tell the configurations that differ: its kernels
/// and launch plan.
fn plan_signature(program: &ir::Program, work_group: &[usize]) -> Option<(u64, usize)> {
    let c = compile_program(program.clone(), &measure_options(work_group)).ok()?;
    let plan = c.plan?;
    let text = format!("{}\n{}", plan.source, plan.describe());
    Some((fnv1a64(text.as_bytes()), plan.kernels.len()))
}

fn measure_options(work_group: &[usize]) -> Options {
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
struct Checked {
    values: Vec<(usize, Bounded)>,
    /// How many are kept: two per device, as each device may go back to its last variant.
    keep: usize,
}

impl Checked {
    fn has(&self, variant: usize) -> bool {
        self.values.iter().any(|(v, _)| *v == variant)
    }

    fn get(&mut self, variant: usize, program: &ir::Program, inputs: &data::Inputs, steps: u64) -> Bounded {
        if let Some((_, b)) = self.values.iter().find(|(v, _)| *v == variant) {
            return b.clone();
        }
        let b = bounded_eval_program(program, inputs, steps);
        if self.values.len() >= self.keep.max(2) {
            self.values.drain(..1);
        }
        self.values.push((variant, b.clone()));
        b
    }
}

/// `lift tune`: explores `src`, then on each chosen device times configurations (a variant and
/// a `mapGlb` work-group size) with random inputs of the given sizes, checking every result
/// against the reference interpreter (at most `check_steps` steps per variant; see
/// [`check_result`]). First the naive program and the cost model's `top_k` variants (in the
/// order of the device's calibrated model when the tuning cache has one); then, with a budget,
/// mutations of the best configurations so far (another work-group size, or the next variant
/// in the model's order with the parent's work-group size) until the budget is spent, each
/// timed once, and the leaders re-timed. Prints a ranked table per device, how the best was
/// found and its rank in the cost model's order, refits the device's cost-model calibration,
/// writes the table (CSV or JSON) and the sweep's chart if asked, and stores the fastest
/// correct configuration per device in the tuning cache.
pub fn tune_with(src: &str, sizes: &[String], devices: &[String], opts: &TuneOptions) -> Result<String, Error> {
    let start = std::time::Instant::now();
    let given = compile(src, &Options::types_only())?;
    let (prog, info) = (&given.given, &given.given_info);
    if ir::host::has_sections(prog) {
        return Err(Error::plain(
            "`lift tune` of a program with host sections (a host `iterate`, `iterate-until` or `if`) is not supported yet; tune the loop body as a program of its own, `lift run --time` times the whole",
        ));
    }
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let top_k = opts.top_k.max(1);
    let ropts = rewrite::Options {
        sizes: sizes.clone(),
        // a search goes past the seeds, in the model's order
        top_k: if opts.budget.is_some() { top_k.max(24) } else { top_k },
        // every configuration is measured with the sizes built in (`measure`)
        built_in: sizes.clone(),
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(prog, info, &ropts)?;
    // (source, description, program, cost)
    let mut cands: Vec<(String, String, &ir::Program, Option<f64>)> = vec![(
        src.to_string(),
        "naive default lowering of the program".into(),
        prog,
        None,
    )];
    cands.extend(
        ex.variants
            .iter()
            .map(|v| (v.source.clone(), v.description.clone(), &v.program, Some(v.cost))),
    );

    let all = host_runner::devices().map_err(|e| Error::plain(e.to_string()))?;
    let chosen: Vec<host_runner::DeviceInfo> = if devices.is_empty() || devices.iter().any(|d| d == "all") {
        all
    } else if devices.iter().any(|d| d == "gpus") {
        all.into_iter()
            .filter(|d| d.kind == host_runner::DeviceKind::Gpu)
            .collect()
    } else {
        let mut out = vec![];
        for want in devices.iter().flat_map(|d| d.split(',')) {
            match all.iter().find(|d| d.id == want) {
                Some(d) => out.push(d.clone()),
                None => {
                    return Err(Error::plain(format!(
                        "no OpenCL device `{want}`; available: {}",
                        all.iter().map(|d| d.id.as_str()).collect::<Vec<_>>().join(", ")
                    )))
                }
            }
        }
        out
    };
    if chosen.is_empty() {
        return Err(Error::plain("no OpenCL device to tune on"));
    }

    let trace = Trace::new(start);
    trace.at(&format!("explored: {} variant(s)", cands.len()));
    // A device's context and queue serve all its configurations (opening one per
    // configuration cost a measurable share of a budget on NVIDIA's driver).
    host_runner::keep_sessions();
    let mut progress = Progress::new(None, "", (top_k + 1).min(cands.len()), None);
    progress.show("generating random inputs");
    // With a budget each interpretation gets the steps that fit in its share of it.
    let check_steps = match opts.budget {
        Some(b) => opts
            .check_steps
            .min((b.as_secs_f64() * CHECK_SHARE * INTERP_STEPS_PER_S) as u64),
        None => opts.check_steps,
    };
    // The interpreter takes at least a step per input element: inputs larger than its steps
    // cannot be checked, so their values (8 times their bytes) are not made at all.
    let elements = data::input_elements(prog, &sizes)?;
    let no_check: Option<String> = if opts.check_steps == 0 {
        Some("checking is off (--check-steps 0)".into())
    } else if elements > check_steps {
        Some(format!(
            "the inputs' {elements} elements are more than the {check_steps} interpreter steps {}",
            if opts.budget.is_some() {
                "that fit in the budget"
            } else {
                "allowed (--check-steps)"
            }
        ))
    } else {
        None
    };
    let (values, bytes) = data::random_inputs_lean(prog, &sizes, 42, no_check.is_none())?;
    // Shared with the thread that measures a variant, which a time limit may abandon.
    let inputs = std::sync::Arc::new(TuneInputs {
        inputs: values,
        bytes,
        skip_result: no_check.is_some(),
    });
    let limit = time_limit()?;
    verify_checks(info, &inputs.inputs)?;
    trace.at(&format!("random inputs: {elements} element(s)"));

    // Each variant's plan at the default work-group size: a work-group size that leaves it
    // unchanged is not a new configuration. Its number of kernels is a feature of the model.
    progress.show("compiling the variants");
    let defaults: Vec<Option<(u64, usize)>> = cands.iter().map(|c| plan_signature(c.2, &[])).collect();
    let program_key = format!("{:016x}|{}", fnv1a64(src.as_bytes()), sizes_text(&sizes));
    trace.at("compiled the variants");

    let record = Record::new(src, &sizes);
    progress.finish();
    let display = progress_display();
    // The devices sweep at once, one thread each (issue 14): what they share is the program's
    // own interpreted value (computed once, by whichever device needs it first) and the
    // interpreted values of variants (a variant checked on one device is not interpreted again
    // for the other).
    let shared_reference: std::sync::OnceLock<Bounded> = std::sync::OnceLock::new();
    let checked = std::sync::Mutex::new(Checked {
        values: vec![],
        keep: 2 * chosen.len(),
    });
    // (Holding the lock while interpreting: a device that wants the same variant waits for it
    // rather than interpreting it twice.)
    let checked_has = |variant: usize| checked.lock().unwrap_or_else(|e| e.into_inner()).has(variant);
    let checked_get = |variant: usize, program: &ir::Program| {
        checked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(variant, program, &inputs.inputs, check_steps)
    };
    let sweep = |k: usize, dev: &host_runner::DeviceInfo| -> Result<(Vec<Row>, Summary), Error> {
        let label = if chosen.len() > 1 {
            format!("device {k} ({}): ", dev.id)
        } else {
            String::new()
        };
        let mut progress = Progress::new(Some(&display), &label, (top_k + 1).min(cands.len()), opts.budget);
        let mut rows: Vec<Row> = vec![];
        let mut reference: Option<Bounded> = None;
        let calibration = Calibration::load(&dev.name);
        // The order variants are seeded and explored in: the model's, or its calibration's.
        let mut order: Vec<usize> = (1..cands.len()).collect();
        if let Some(cal) = calibration.as_ref().filter(|c| c.usable()) {
            order.sort_by(|&a, &b| {
                let p = |i: usize| match (cands[i].3, defaults[i]) {
                    (Some(cost), Some((_, kernels))) => cal.predict(&Features::of(cost, &[], kernels)),
                    _ => f64::INFINITY,
                };
                p(a).total_cmp(&p(b)).then(a.cmp(&b))
            });
        }
        // The devices run at once: each has what is left of the whole budget.
        let device_start = std::time::Instant::now();
        let mut budget = Budget::new(
            opts.budget.map(|b| b.saturating_sub(start.elapsed())),
            Box::new(move || device_start.elapsed().as_secs_f64()),
        );
        let mut out_of_time = 0usize;
        // The device still runs a configuration abandoned at its time limit.
        let mut busy = false;
        let mut tried: Vec<Config> = vec![];
        // (variant, plan signature) of the configurations timed on this device
        let mut seen: std::collections::BTreeSet<(usize, u64)> = defaults
            .iter()
            .enumerate()
            .filter_map(|(i, d)| Some((i, d.as_ref()?.0)))
            .collect();
        let mut void = 0usize;
        let naive = Config {
            variant: 0,
            work_group: vec![],
        };
        // The seeds alternate between the calibrated order and the model's own, so that the
        // model's first variants are always timed: a calibration fitted on other programs can
        // rank a whole family last (in session 9's suite run on the H200 it came out at
        // -1.22 per kernel and seeded none of sum's one-launch grid reductions, 0.100 ms in the
        // run before, leaving a 0.133 ms four-kernel sum the best).
        let mut seeds: Vec<Config> = seed_order(&order)
            .iter()
            .take(top_k)
            .map(|&variant| Config {
                variant,
                work_group: vec![],
            })
            .collect();
        // With a budget the program as written is timed after the model's seeds, before the
        // mutations: its naive lowering can take longer than the whole budget (mm at 4096³ on
        // the H200: over 30 s a run, one work-item per row), and a measurement cannot be
        // stopped on the device, so timed early it left the rest of the budget to waiting.
        // Without one it comes second, after the model's first variant: a first run already
        // SLOW_CUT times that one's is not repeated.
        if opts.budget.is_some() {
            seeds.push(naive);
        } else {
            seeds.insert(seeds.len().min(1), naive);
        }
        let mut rng = Rng(opts.seed ^ fnv1a64(program_key.as_bytes()));
        let mut queue: std::collections::VecDeque<(Config, &'static str)> =
            seeds.into_iter().map(|c| (c, "seed (cost model)")).collect();
        loop {
            let (config, found_by) = match queue.pop_front() {
                Some(next) => next,
                None if opts.budget.is_some() && budget.admits(SEARCH_SHARE, budget.typical()) => {
                    match mutate(&rows, k, &tried, &order, &mut rng) {
                        Some(next) => next,
                        None => break,
                    }
                }
                None => break,
            };
            // With a budget, the seeds too stop when it is spent (after at least one).
            if opts.budget.is_some() && !tried.is_empty() && !budget.admits(SEARCH_SHARE, budget.typical()) {
                break;
            }
            if tried.contains(&config) {
                continue;
            }
            tried.push(config.clone());
            // A new variant may need interpreting (when it is competitive): one that would end
            // past the budget is left out, and the search goes on with cheaper ones.
            let interp = if config.variant != 0 && !checked_has(config.variant) && no_check.is_none() {
                budget.typical_interp()
            } else {
                0.0
            };
            let first = !rows.iter().any(|r| r.device_index == k);
            let Some(this_limit) = budget.admit(config.variant, interp, first, limit) else {
                out_of_time += 1;
                continue;
            };
            let trial_start = std::time::Instant::now();
            let mut interpreting = 0.0;
            let (source, description, program, _) = &cands[config.variant];
            let mut config = config;
            if !config.work_group.is_empty() {
                let Some((sig, _)) = plan_signature(program, &config.work_group) else {
                    void += 1;
                    continue;
                };
                // A size for a dimension the kernels do not have changes nothing: the
                // configuration is named by the sizes that apply.
                if config.work_group.len() > 1
                    && plan_signature(program, &config.work_group[..1]).map(|s| s.0) == Some(sig)
                {
                    config.work_group.truncate(1);
                }
                if !seen.insert((config.variant, sig)) {
                    // the kernels cannot take this size (or have no mapGlb), or an equal
                    // configuration was tried: nothing new to time
                    void += 1;
                    continue;
                }
            }
            let try_no = rows.iter().filter(|r| r.device_index == k).count() + 1;
            let mut row = Row {
                started_s: start.elapsed().as_secs_f64(),
                ended_s: 0.0,
                device: dev.name.clone(),
                device_index: k,
                variant: config.variant,
                work_group: config.work_group.clone(),
                try_no,
                found_by,
                median_ms: None,
                check: Check::NotRun,
                error: String::new(),
                description: description.clone(),
                resumed: false,
                secs: 0.0,
                cut: None,
                built_in: true,
            };
            let key = Record::config_key(source, &config.work_group);
            if let Some((ms, check)) = record.lookup(&dev.name, &key) {
                row.median_ms = Some(ms);
                row.check = check;
                row.resumed = true;
                row.started_s = 0.0;
                progress.tried(row.correct().then_some(ms));
                rows.push(row);
                continue;
            }
            progress.show(&format!(
                "variant {} (work-group {}) on {}",
                config.variant,
                work_group_text(&config.work_group),
                dev.id
            ));
            // With a budget every configuration is timed once; the leaders are re-timed below.
            // Without, one that is already SLOW_CUT times the best after one run is not run again.
            let best_so_far = rows
                .iter()
                .filter(|r| r.device_index == k && r.usable())
                .filter_map(|r| r.median_ms)
                .fold(f64::INFINITY, f64::min);
            let probe_first = opts.budget.is_none() && opts.repeats > 1 && best_so_far.is_finite();
            let repeats = if opts.budget.is_some() || probe_first {
                1
            } else {
                opts.repeats
            };
            let mut measured = measure_within(this_limit, program, &config.work_group, &inputs, &dev.id, repeats, true);
            if probe_first {
                match &measured {
                    Some(Ok((_, ms))) if slow(*ms, best_so_far) => row.cut = Some(ms / best_so_far),
                    Some(Ok(_)) => {
                        measured = measure_within(
                            this_limit,
                            program,
                            &config.work_group,
                            &inputs,
                            &dev.id,
                            opts.repeats,
                            true,
                        )
                    }
                    _ => {}
                }
            }
            let Some(measured) = measured else {
                if opts.budget.is_none() {
                    return Err(timed_out(&rows, config.variant, &dev.id, limit));
                }
                // A search keeps what it measured: a configuration past the limit cannot be the
                // best, and the device is still busy with it, so this device's search ends here.
                row.error = if this_limit < limit {
                    format!("cut at the end of the budget, after {:.1} s", this_limit.as_secs_f64())
                } else {
                    format!("did not finish within {} s ({TIME_LIMIT_VAR})", limit.as_secs_f64())
                };
                progress.tried(None);
                row.ended_s = start.elapsed().as_secs_f64();
                rows.push(row);
                busy = true;
                break;
            };
            let (got, ms) = match measured {
                Ok(m) => m,
                Err(e) => {
                    row.error = e.message().lines().next().unwrap_or("").to_string();
                    progress.tried(None);
                    row.ended_s = start.elapsed().as_secs_f64();
                    row.secs = trial_start.elapsed().as_secs_f64();
                    budget.trial(config.variant, row.secs);
                    rows.push(row);
                    continue;
                }
            };
            row.median_ms = Some(ms);
            // A search checks what could win: interpreting every variant would spend most of the
            // budget on configurations slower than one already checked, which never become the
            // tuned best (checked results rank first).
            let best_checked = rows
                .iter()
                .filter(|r| r.device_index == k && r.usable() && !r.deferred())
                .filter_map(|r| r.median_ms)
                .fold(f64::INFINITY, f64::min);
            // (Without checks nothing is deferred: a deferred row competes first for re-timing.)
            if opts.budget.is_some() && no_check.is_none() && config.variant != 0 && ms > best_checked * COMPETITIVE {
                row.check = Check::Unchecked(format!("{DEFERRED}: {:.2}x the best checked so far", ms / best_checked));
            } else {
                // The program's own value (variant 0) is the reference for every variant
                // measured in this run.
                if reference.is_none() && no_check.is_none() {
                    progress.show("variant 0: interpreting with error bounds");
                    let t = std::time::Instant::now();
                    let r = shared_reference
                        .get_or_init(|| bounded_eval_program(cands[0].2, &inputs.inputs, check_steps))
                        .clone();
                    trace.at(&format!(
                        "interpreted the program in {:.2} s",
                        t.elapsed().as_secs_f64()
                    ));
                    interpreting += t.elapsed().as_secs_f64();
                    if let Err(Check::Wrong(why)) = &r {
                        // The program itself fails on these inputs: the user's error to see.
                        return Err(Error::plain(why.replace("on this variant", "on the random inputs")));
                    }
                    reference = Some(r);
                }
                let value = if let Some(why) = &no_check {
                    Err(Check::Unchecked(why.clone()))
                } else if let Some(Err(e)) = &reference {
                    // Without the program's own value there is nothing to compare a variant with.
                    Err(e.clone())
                } else if config.variant == 0 {
                    reference.clone().expect("interpreted above")
                } else {
                    progress.show(&format!("variant {}: interpreting with error bounds", config.variant));
                    let t = std::time::Instant::now();
                    let fresh = !checked_has(config.variant);
                    let value = checked_get(config.variant, program);
                    if fresh {
                        budget.interpreted(t.elapsed().as_secs_f64());
                    }
                    interpreting += t.elapsed().as_secs_f64();
                    value
                };
                row.check = judge(&reference, &value, &got);
            }
            drop(got);
            record.store(&dev.name, &key, ms, &row.check);
            progress.tried(row.correct().then_some(row.median_ms).flatten());
            row.ended_s = start.elapsed().as_secs_f64();
            row.secs = trial_start.elapsed().as_secs_f64() - interpreting;
            budget.trial(config.variant, row.secs);
            trace.at(&format!(
                "variant {} work-group {}: {ms:.4} ms, {:.2} s to build and time, {interpreting:.2} s interpreting",
                config.variant,
                work_group_text(&config.work_group),
                row.secs
            ));
            rows.push(row);
        }
        // Re-time the leaders of a budgeted search: one timing may be noise.
        let mut refined = 0;
        if opts.budget.is_some() && opts.repeats > 1 && !busy {
            let mut leaders: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].device_index == k && rows[i].usable() && !rows[i].resumed)
                .collect();
            // A configuration left unchecked as slower competes on its time: one timing of the
            // best checked one may have been luckily fast.
            let key = |r: &Row| {
                (
                    if r.deferred() { 0 } else { r.rank_key().0 },
                    r.median_ms.unwrap_or(f64::INFINITY),
                )
            };
            leaders.sort_by(|&a, &b| {
                let (ka, kb) = (key(&rows[a]), key(&rows[b]));
                ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            });
            for &i in leaders.iter().take(LEADERS) {
                // (a leader left unchecked may need its variant interpreted)
                let interp = if rows[i].deferred() && !checked_has(rows[i].variant) && no_check.is_none() {
                    budget.typical_interp()
                } else {
                    0.0
                };
                let retime = Budget::retime_cost(rows[i].secs, rows[i].median_ms.unwrap_or(0.0), opts.repeats);
                if !budget.admits(FINISH_SHARE, retime + interp) {
                    trace.at(&format!(
                        "no time to re-time variant {} ({retime:.2} s)",
                        rows[i].variant
                    ));
                    continue;
                }
                let (source, _, program, _) = &cands[rows[i].variant];
                progress.show(&format!("re-timing variant {}", rows[i].variant));
                let wg = rows[i].work_group.clone();
                let Some(measured) =
                    measure_within(budget.limit(limit), program, &wg, &inputs, &dev.id, opts.repeats, true)
                else {
                    // (its one timing stands; the device is busy with this one until it ends)
                    break;
                };
                let (got, ms) = match measured {
                    Ok(m) => m,
                    Err(e) => {
                        trace.at(&format!(
                            "re-timing variant {} failed: {}",
                            rows[i].variant,
                            e.message()
                        ));
                        continue;
                    }
                };
                trace.at(&format!(
                    "re-timed variant {} work-group {}: {ms:.4} ms",
                    rows[i].variant,
                    work_group_text(&rows[i].work_group)
                ));
                if rows[i].deferred() {
                    if reference.is_none() && no_check.is_none() {
                        progress.show("variant 0: interpreting with error bounds");
                        reference = Some(
                            shared_reference
                                .get_or_init(|| bounded_eval_program(cands[0].2, &inputs.inputs, check_steps))
                                .clone(),
                        );
                    }
                    let value = if let Some(why) = &no_check {
                        Err(Check::Unchecked(why.clone()))
                    } else if let Some(Err(e)) = &reference {
                        Err(e.clone())
                    } else {
                        progress.show(&format!("variant {}: interpreting with error bounds", rows[i].variant));
                        checked_get(rows[i].variant, program)
                    };
                    rows[i].check = judge(&reference, &value, &got);
                }
                rows[i].median_ms = Some(ms);
                record.store(&dev.name, &Record::config_key(source, &wg), ms, &rows[i].check);
                refined += 1;
            }
        }
        // The best configurations again with their sizes as kernel arguments, where generic
        // kernels are legal (their plan compiles without the sizes): each is a configuration
        // of its own, ranked with the rest, so the tuned best may keep its sizes as arguments.
        // They are timed in every run, next to the leaders' timings of that run, and not
        // recorded for resuming (the tuned best records which it is).
        let mut alternatives = 0;
        if !busy && !sizes.is_empty() {
            let mut leaders: Vec<usize> = (0..rows.len())
                .filter(|&i| {
                    let r = &rows[i];
                    r.device_index == k && r.usable() && !r.deferred() && r.built_in
                })
                .collect();
            leaders.sort_by(|&a, &b| {
                let (ka, kb) = (rows[a].rank_key(), rows[b].rank_key());
                ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
            });
            leaders.truncate(ALTERNATIVES);
            for i in leaders {
                let (variant, wg) = (rows[i].variant, rows[i].work_group.clone());
                let (_, description, program, _) = &cands[variant];
                if plan_signature(program, &wg).is_none() {
                    trace.at(&format!(
                        "variant {variant} work-group {}: generic kernels are not legal, its sizes stay built in",
                        work_group_text(&wg)
                    ));
                    continue;
                }
                let mut row = Row {
                    started_s: start.elapsed().as_secs_f64(),
                    ended_s: 0.0,
                    device: dev.name.clone(),
                    device_index: k,
                    variant,
                    work_group: wg.clone(),
                    try_no: rows.iter().filter(|r| r.device_index == k).count() + 1,
                    found_by: "a leader, with its sizes as kernel arguments",
                    median_ms: None,
                    check: Check::NotRun,
                    error: String::new(),
                    description: description.clone(),
                    resumed: false,
                    secs: 0.0,
                    cut: None,
                    built_in: false,
                };
                let interp = if variant != 0 && !checked_has(variant) && no_check.is_none() {
                    budget.typical_interp()
                } else {
                    0.0
                };
                let cost = Budget::retime_cost(rows[i].secs, rows[i].median_ms.unwrap_or(0.0), opts.repeats);
                if !budget.admits(FINISH_SHARE, cost + interp) {
                    trace.at(&format!(
                        "no time to time variant {variant} with its sizes as arguments ({cost:.2} s)"
                    ));
                    out_of_time += 1;
                    continue;
                }
                progress.show(&format!("variant {variant} with its sizes as kernel arguments"));
                let trial_start = std::time::Instant::now();
                let Some(measured) =
                    measure_within(budget.limit(limit), program, &wg, &inputs, &dev.id, opts.repeats, false)
                else {
                    // (cut at the end of the budget: the device is busy with it until it ends)
                    trace.at(&format!("variant {variant} with its sizes as arguments did not finish"));
                    break;
                };
                let (got, ms) = match measured {
                    Ok(m) => m,
                    Err(e) => {
                        row.error = e.message().lines().next().unwrap_or("").to_string();
                        row.ended_s = start.elapsed().as_secs_f64();
                        rows.push(row);
                        continue;
                    }
                };
                row.median_ms = Some(ms);
                // Other kernels than those checked: compared with the interpreter in their turn.
                if reference.is_none() && no_check.is_none() {
                    progress.show("variant 0: interpreting with error bounds");
                    reference = Some(
                        shared_reference
                            .get_or_init(|| bounded_eval_program(cands[0].2, &inputs.inputs, check_steps))
                            .clone(),
                    );
                }
                let value = if let Some(why) = &no_check {
                    Err(Check::Unchecked(why.clone()))
                } else if let Some(Err(e)) = &reference {
                    Err(e.clone())
                } else if variant == 0 {
                    reference.clone().expect("interpreted above")
                } else {
                    progress.show(&format!("variant {variant}: interpreting with error bounds"));
                    checked_get(variant, program)
                };
                row.check = judge(&reference, &value, &got);
                drop(got);
                row.ended_s = start.elapsed().as_secs_f64();
                row.secs = trial_start.elapsed().as_secs_f64();
                trace.at(&format!(
                    "variant {variant} work-group {} with its sizes as kernel arguments: {ms:.4} ms (built in: {:.4} ms)",
                    work_group_text(&wg),
                    rows[i].median_ms.unwrap_or(f64::NAN)
                ));
                rows.push(row);
                alternatives += 1;
            }
        }
        // The device's calibration, refitted with this run's timings: every configuration that
        // ran and is not known wrong (a timing is a timing whether or not it was checked; with
        // `--check-steps 0`, as the suite runs, none is).
        let points: Vec<(Features, f64)> = rows
            .iter()
            .filter(|r| r.device_index == k && r.usable() && r.built_in)
            .filter_map(|r| {
                let cost = cands[r.variant].3?;
                let kernels = defaults[r.variant]?.1;
                Some((Features::of(cost, &r.work_group, kernels), r.median_ms?.max(1e-6).ln()))
            })
            .collect();
        let refit = Calibration::refit(&dev.name, &program_key, &points);
        progress.finish();
        Ok((
            rows,
            Summary {
                void,
                out_of_time,
                refined,
                alternatives,
                calibrated_order: calibration.as_ref().is_some_and(|c| c.usable()),
                refit,
                order,
                elapsed: device_start.elapsed(),
            },
        ))
    };
    let outcomes: Vec<Result<(Vec<Row>, Summary), Error>> = if chosen.len() < 2 {
        chosen.iter().enumerate().map(|(k, dev)| sweep(k, dev)).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chosen
                .iter()
                .enumerate()
                .map(|(k, dev)| {
                    let sweep = &sweep;
                    std::thread::Builder::new()
                        .name(format!("lift-tune-{k}"))
                        .stack_size(ir::STACK_BYTES)
                        .spawn_scoped(scope, move || sweep(k, dev))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(Error::plain("internal error in a device's sweep (a bug in lift)"))),
                    Err(e) => Err(Error::plain(format!("cannot start a device's sweep thread: {e}"))),
                })
                .collect()
        })
    };
    drop(display);
    // Every device's rows, in device order; the first device's error, if any, is the run's
    // (what the others measured is in the tuning cache already).
    let mut rows: Vec<Row> = vec![];
    let mut summaries = vec![];
    for outcome in outcomes {
        let (mine, summary) = outcome?;
        rows.extend(mine);
        summaries.push(summary);
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "sizes: {}; {} variants (e-graph {} nodes, {} classes); results checked against the interpreter \
         (f64, with float32 error bounds for each variant's order of evaluation)",
        sizes_text(&sizes),
        cands.len(),
        ex.stats.nodes,
        ex.stats.classes,
    );
    let resumed = rows.iter().filter(|r| r.resumed).count();
    if resumed > 0 {
        // (of the results that can be: those with the sizes as arguments are timed each run)
        let _ = writeln!(
            out,
            "resumed: {resumed} of {} result(s) were measured by an earlier run (tuning cache)",
            rows.iter().filter(|r| r.built_in).count()
        );
    }
    for (k, dev) in chosen.iter().enumerate() {
        let summary = &summaries[k];
        let mine: Vec<&Row> = rows.iter().filter(|r| r.device_index == k).collect();
        let naive = mine
            .iter()
            .find(|r| r.variant == 0 && r.work_group.is_empty())
            .and_then(|r| r.median_ms);
        let mut ranked: Vec<&Row> = mine.clone();
        ranked.sort_by(|a, b| {
            let (ka, kb) = (a.rank_key(), b.rank_key());
            ka.0.cmp(&kb.0)
                .then(ka.1.total_cmp(&kb.1))
                .then(a.try_no.cmp(&b.try_no))
        });
        let _ = writeln!(out, "\ndevice {} ({})", dev.name, dev.id);
        let model_rank = |variant: usize| -> String {
            if variant == 0 {
                "as written".into()
            } else {
                format!("cost-model rank {variant}")
            }
        };
        if let Some(budget) = opts.budget {
            let seeded = mine.iter().filter(|r| r.found_by.starts_with("seed")).count();
            let _ = writeln!(
                out,
                "search: {} configuration(s) tried in {:.1} s of a {:.1} s budget ({seeded} seeded by the {}, \
                 {} mutation(s) of the best; {} work-group size(s) without effect skipped; {} left out as they would \
                 end past the budget; {} leader(s) re-timed with {} repeats, {} with the sizes as kernel arguments)",
                mine.len(),
                summary.elapsed.as_secs_f64(),
                budget.as_secs_f64(),
                if summary.calibrated_order {
                    "cost model and its calibration"
                } else {
                    "cost model"
                },
                mine.len() - seeded,
                summary.void,
                summary.out_of_time,
                summary.refined,
                opts.repeats,
                summary.alternatives
            );
        }
        if let Some(best) = ranked.first().filter(|r| r.usable()) {
            let sp = match (naive, best.median_ms) {
                (Some(n), Some(m)) if m > 0.0 => format!("; {:.2}x the naive default lowering", n / m),
                _ => String::new(),
            };
            let calibrated = summary
                .order
                .iter()
                .position(|&v| v == best.variant)
                .filter(|_| summary.calibrated_order)
                .map_or(String::new(), |p| format!(" (calibrated rank {})", p + 1));
            let built_in = if best.built_in {
                "sizes built in"
            } else {
                SIZES_AS_ARGUMENTS
            };
            let _ = writeln!(
                out,
                "best: variant {} ({}{calibrated}), work-group {}, {built_in}, found at try {} by {}{sp}",
                best.variant,
                model_rank(best.variant),
                work_group_text(&best.work_group),
                best.try_no,
                best.found_by
            );
        }
        if let Some(fit) = &summary.refit {
            let _ = writeln!(out, "{fit}");
        }
        let _ = writeln!(
            out,
            "{:>4} {:>7} {:>10} {:>4} {:>12} {:>9} {:>9} {:>9}  description",
            "rank", "variant", "work-group", "try", "median ms", "speed-up", "check", "bound"
        );
        for (rank, r) in ranked.iter().enumerate() {
            let ms = r.median_ms.map_or("-".to_string(), |m| format!("{m:.4}"));
            let sp = match (naive, r.median_ms) {
                (Some(n), Some(m)) if m > 0.0 => format!("{:.2}x", n / m),
                _ => "-".into(),
            };
            let bound = r.check.bound().map_or("-".to_string(), |b| format!("{b:.1e}"));
            let note = r.note();
            let desc = if note.is_empty() {
                r.description.clone()
            } else {
                format!("{} [{note}]", r.description)
            };
            let _ = writeln!(
                out,
                "{:>4} {:>7} {:>10} {:>4} {ms:>12} {sp:>9} {:>9} {bound:>9}  {desc}",
                rank + 1,
                r.variant,
                work_group_text(&r.work_group),
                r.try_no,
                r.check.label()
            );
        }
        let skipped = mine.iter().filter(|r| r.median_ms.is_none()).count();
        if skipped > 0 {
            let _ = writeln!(
                out,
                "skipped: {skipped} variant(s) could not run on this device (see their notes)"
            );
        }
        // The fastest configuration that ran and is not known to be wrong: checked ones rank
        // first, so an unchecked one is kept only where nothing could be checked (large sizes
        // with `--check-steps 0`, which `lift bench --check-size` then checks at smaller sizes).
        if let Some(best) = ranked.first().filter(|r| r.usable()) {
            store_best(
                src,
                &sizes,
                &dev.name,
                serde_json::json!({
                    "source": cands[best.variant].0,
                    "variant": best.variant,
                    "description": best.description,
                    "work_group": best.work_group,
                    "built_in": best.built_in,
                    "checked": best.correct(),
                    "median_ms": best.median_ms,
                    "naive_ms": naive,
                }),
            );
        }
    }
    let _ = writeln!(
        out,
        "\ncheck: ok = every element within its float32 error bound; bound = the largest such bound relative to \
         the largest element (it grows with the lengths of the variant's sequential reductions)"
    );
    if let Some(path) = &opts.out {
        write_table(path, &rows)?;
    }
    if let Some(path) = &opts.plot {
        plot_sweep(path, &rows, &chosen)?;
    }
    Ok(out)
}

/// What a device's search did, for its report.
struct Summary {
    void: usize,
    out_of_time: usize,
    refined: usize,
    /// Leaders timed again with their sizes as kernel arguments.
    alternatives: usize,
    calibrated_order: bool,
    refit: Option<String>,
    order: Vec<usize>,
    elapsed: std::time::Duration,
}

fn timed_out(rows: &[Row], variant: usize, device: &str, limit: std::time::Duration) -> Error {
    let kept = rows.iter().filter(|r| r.median_ms.is_some()).count();
    Error::plain(format!(
        "variant {variant} did not finish on {device} within {} s ({TIME_LIMIT_VAR}); the {kept} result(s) \
         measured so far are in the tuning cache, and the next run resumes from them",
        limit.as_secs_f64()
    ))
}

/// A device result against the program's value (`reference`) and the variant's (`value`).
fn judge(reference: &Option<Bounded>, value: &Bounded, got: &Value) -> Check {
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

/// The next configuration of a budgeted search on device `k`: a mutation of one of the best
/// configurations so far (a random one of the `LEADERS` fastest correct): another work-group
/// size (two times in three), or the next variant in `order` not yet tried with the parent's
/// work-group size. `None` when every configuration has been tried.
fn mutate(rows: &[Row], k: usize, tried: &[Config], order: &[usize], rng: &mut Rng) -> Option<(Config, &'static str)> {
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
fn seed_order(order: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::BTreeSet::new();
    order
        .iter()
        .zip(1..)
        .flat_map(|(&c, m)| [c, m])
        .filter(|v| seen.insert(*v))
        .collect()
}

/// The cost model's features of a configuration for its calibration: the model's estimate, the
/// work-group size and the number of kernels (launches), all known before timing.
#[derive(Clone, Copy, Debug)]
struct Features([f64; 3]);

impl Features {
    fn of(cost: f64, work_group: &[usize], kernels: usize) -> Features {
        let wg: usize = if work_group.is_empty() {
            256
        } else {
            work_group.iter().product()
        };
        Features([cost.max(1.0).ln(), (wg as f64 / 256.0).ln(), kernels as f64])
    }
}

/// A device's calibration of the cost model: ln t ≈ c · features + (a constant per program and
/// sizes), fitted by least squares over the timings of every tune on the device. The
/// constants drop out of the order of one program's configurations, so only `c` is kept.
struct Calibration {
    coef: [f64; 3],
    points: usize,
    programs: usize,
}

/// Timings kept per device for the calibration (the newest).
const CALIBRATION_POINTS: usize = 2000;

impl Calibration {
    fn key(device: &str) -> String {
        format!("calibration|{device}")
    }

    fn load(device: &str) -> Option<Calibration> {
        let cache = read_cache(&cache_path()?);
        let e = cache.get(&Calibration::key(device))?;
        let c: Vec<f64> = e.get("coef")?.as_array()?.iter().filter_map(|x| x.as_f64()).collect();
        Some(Calibration {
            coef: [*c.first()?, *c.get(1)?, *c.get(2)?],
            points: e.get("fitted_points")?.as_u64()? as usize,
            programs: e.get("programs")?.as_u64()? as usize,
        })
    }

    /// Enough timings, of more than one program, that the fit says something beyond the run
    /// that made it.
    fn usable(&self) -> bool {
        self.points >= 12 && self.programs >= 2
    }

    fn predict(&self, f: &Features) -> f64 {
        self.coef.iter().zip(f.0).map(|(c, x)| c * x).sum()
    }

    /// Adds this run's points (replacing the program's earlier ones), refits and stores the
    /// calibration; its description for the report, `None` when nothing could be fitted.
    fn refit(device: &str, program: &str, points: &[(Features, f64)]) -> Option<String> {
        let mut text = None;
        update_cache(|cache| {
            let key = Calibration::key(device);
            let mut all: Vec<(String, [f64; 3], f64)> = cache
                .get(&key)
                .and_then(|e| e.get("points"))
                .and_then(|p| p.as_array())
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| {
                            let p = p.as_array()?;
                            let f = |i: usize| p.get(i).and_then(|x| x.as_f64());
                            Some((p.first()?.as_str()?.to_string(), [f(1)?, f(2)?, f(3)?], f(4)?))
                        })
                        .filter(|(prog, _, _)| prog != program)
                        .collect()
                })
                .unwrap_or_default();
            all.extend(points.iter().map(|(f, y)| (program.to_string(), f.0, *y)));
            let drop = all.len().saturating_sub(CALIBRATION_POINTS);
            all.drain(..drop);
            let Some((coef, programs)) = fit(&all) else {
                return;
            };
            let json_points: Vec<serde_json::Value> = all
                .iter()
                .map(|(p, f, y)| serde_json::json!([p, f[0], f[1], f[2], y]))
                .collect();
            cache.insert(
                key,
                serde_json::json!({
                    "coef": coef, "fitted_points": all.len(), "programs": programs,
                    "points": json_points,
                }),
            );
            text = Some(format!(
                "calibration of the cost model on this device (least squares on ln time over {} timing(s) of {} \
                 program(s), a constant per program): ln t = {:+.3}·ln(cost) {:+.3}·ln(work-group/256) {:+.3}·kernels + c",
                all.len(),
                programs,
                coef[0],
                coef[1],
                coef[2]
            ));
        });
        text
    }
}

/// Weight of [`PRIOR`] in the fit, as if it were that many unit-variance observations.
const RIDGE: f64 = 1.0;
const PRIOR: [f64; 3] = [1.0, 0.0, 0.0];

/// Least squares of y on the features, each program's points centred on their means (its own
/// constant), with a ridge towards [`PRIOR`]. The coefficients and the number of programs;
/// `None` with fewer than 4 points.
// (index loops read as the matrix algebra they are)
#[allow(clippy::needless_range_loop)]
fn fit(points: &[(String, [f64; 3], f64)]) -> Option<([f64; 3], usize)> {
    if points.len() < 4 {
        return None;
    }
    let mut means: BTreeMap<&str, ([f64; 3], f64, f64)> = BTreeMap::new();
    for (p, f, y) in points {
        let m = means.entry(p.as_str()).or_insert(([0.0; 3], 0.0, 0.0));
        for i in 0..3 {
            m.0[i] += f[i];
        }
        m.1 += y;
        m.2 += 1.0;
    }
    let mut a = [[0.0f64; 3]; 3];
    let mut b = [0.0f64; 3];
    for (p, f, y) in points {
        let m = &means[p.as_str()];
        let x: Vec<f64> = (0..3).map(|i| f[i] - m.0[i] / m.2).collect();
        let y = y - m.1 / m.2;
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] += x[i] * x[j];
            }
            b[i] += x[i] * y;
        }
    }
    // The prior: time proportional to the model's estimate, no effect of the rest. A feature
    // that barely varies (the estimates of one program's variants can be close) keeps it
    // rather than taking a huge coefficient from noise.
    for (i, row) in a.iter_mut().enumerate() {
        row[i] += RIDGE;
        b[i] += RIDGE * PRIOR[i];
    }
    // Gaussian elimination with partial pivoting on the 3×3 normal equations.
    for c in 0..3 {
        let p = (c..3).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        a.swap(c, p);
        b.swap(c, p);
        if a[c][c].abs() < 1e-12 {
            return None;
        }
        for r in c + 1..3 {
            let f = a[r][c] / a[c][c];
            for j in c..3 {
                a[r][j] -= f * a[c][j];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0f64; 3];
    for c in (0..3).rev() {
        let s: f64 = (c + 1..3).map(|j| a[c][j] * x[j]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    x.iter().all(|v| v.is_finite()).then_some((x, means.len()))
}

/// The sweep as an SVG chart: the time of every configuration tried, in the order tried (one
/// series per device), the best of each device marked.
fn plot_sweep(path: &Path, rows: &[Row], devices: &[host_runner::DeviceInfo]) -> Result<(), Error> {
    use plotters::prelude::*;
    let err = |e: String| Error::plain(format!("cannot draw {}: {e}", path.display()));
    let timed: Vec<&Row> = rows.iter().filter(|r| r.median_ms.is_some()).collect();
    let tries = rows.iter().map(|r| r.try_no).max().unwrap_or(1).max(2);
    let lo = timed.iter().filter_map(|r| r.median_ms).fold(f64::INFINITY, f64::min);
    let hi = timed.iter().filter_map(|r| r.median_ms).fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && lo > 0.0 {
        (lo / 1.5, hi * 1.5)
    } else {
        (1e-3, 1.0)
    };
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("lift tune: configurations in the order tried", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0usize..tries + 1, (lo..hi).log_scale())
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("try")
        .y_desc("kernel time (ms, log scale)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    for (k, dev) in devices.iter().enumerate() {
        let color = colors[k % colors.len()];
        let mine: Vec<&Row> = timed.iter().copied().filter(|r| r.device_index == k).collect();
        let ok: Vec<(usize, f64)> = mine
            .iter()
            .filter(|r| r.usable())
            .filter_map(|r| Some((r.try_no, r.median_ms?)))
            .collect();
        let wrong: Vec<(usize, f64)> = mine
            .iter()
            .filter(|r| !r.usable())
            .filter_map(|r| Some((r.try_no, r.median_ms?)))
            .collect();
        chart
            .draw_series(ok.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled())))
            .map_err(|e| err(e.to_string()))?
            .label(format!("{} ({})", dev.name, dev.id))
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
        chart
            .draw_series(wrong.iter().map(|&(x, y)| Cross::new((x, y), 4, color)))
            .map_err(|e| err(e.to_string()))?;
        let mut ranked: Vec<&Row> = mine.iter().copied().filter(|r| r.usable()).collect();
        ranked.sort_by(|a, b| {
            a.rank_key()
                .0
                .cmp(&b.rank_key().0)
                .then(a.rank_key().1.total_cmp(&b.rank_key().1))
        });
        if let Some(best) = ranked.first() {
            let (x, y) = (best.try_no, best.median_ms.unwrap_or(lo));
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 8, color.stroke_width(2))))
                .map_err(|e| err(e.to_string()))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!(
                        "best: variant {}, work-group {}, {y:.4} ms (try {x})",
                        best.variant,
                        work_group_text(&best.work_group)
                    ),
                    (x, y * 0.8),
                    ("sans-serif", 13).into_font().color(&color),
                )))
                .map_err(|e| err(e.to_string()))?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}
fn rows_naive(rows: &[Row]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter(|r| r.variant == 0 && r.work_group.is_empty())
        .filter_map(|r| r.median_ms.map(|m| (r.device.clone(), m)))
        .collect()
}

fn write_table(path: &Path, rows: &[Row]) -> Result<(), Error> {
    let naive = &rows_naive(rows);
    let speedup = |r: &Row| match (naive.get(&r.device), r.median_ms) {
        (Some(n), Some(m)) if m > 0.0 => Some(n / m),
        _ => None,
    };
    let text = if path.extension().is_some_and(|e| e == "json") {
        let arr: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "device": r.device, "variant": r.variant, "work_group": r.work_group,
                    "try": r.try_no, "found_by": r.found_by, "median_ms": r.median_ms,
                    "speedup": speedup(r), "correct": r.correct(), "check": r.check.label(),
                    "bound": r.check.bound(), "note": r.note(), "description": r.description,
                    "device_index": r.device_index, "started_s": r.started_s, "ended_s": r.ended_s,
                    "built_in": r.built_in,
                })
            })
            .collect();
        serde_json::to_string_pretty(&arr).unwrap_or_default()
    } else {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut t =
            String::from("device,variant,work_group,try,median_ms,speedup,correct,check,bound,note,description\n");
        for r in rows {
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{},{},{},{}",
                q(&r.device),
                r.variant,
                work_group_text(&r.work_group),
                r.try_no,
                r.median_ms.map_or(String::new(), |m| format!("{m:.6}")),
                speedup(r).map_or(String::new(), |s| format!("{s:.4}")),
                r.correct(),
                r.check.label(),
                r.check.bound().map_or(String::new(), |b| format!("{b:.3e}")),
                q(&r.note()),
                q(&r.description)
            );
        }
        t
    };
    std::fs::write(path, text).map_err(|e| Error::plain(format!("cannot write {}: {e}", path.display())))
}

/// Seconds one variant may take to compile and run on one device before `lift tune` stops
/// (its results so far stay in the tuning cache); default [`TIME_LIMIT_S`].
pub const TIME_LIMIT_VAR: &str = "LIFT_TUNE_TIME_LIMIT";
pub const TIME_LIMIT_S: f64 = 600.0;

fn time_limit() -> Result<std::time::Duration, Error> {
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
fn measure_within(
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
fn measure(
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

#[cfg(test)]
mod tests {
    use super::*;

    const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";

    /// A partial reduction as the rewriter makes them: sums of chunks of 256, then their sum.
    fn chunked(init: &str) -> String {
        format!(
            "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (reduceSeq (lambda (a b) (+ a b)) 0.0f \
             (join (toGlobal (mapGlb (lambda (c) (reduceSeq (lambda (a b) (+ a b)) {init} c)) (split #256 xs))))))))"
        )
    }

    fn inputs(xs: &[f32]) -> data::Inputs {
        data::Inputs {
            values: vec![Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())],
            sizes: [("N".to_string(), xs.len() as i64)].into_iter().collect(),
        }
    }

    fn bounded(src: &str, xs: &[f32]) -> Value {
        match bounded_eval(src, &inputs(xs), CHECK_STEPS) {
            Ok(Ok(v)) => v,
            other => panic!("no bounded value: {other:?}"),
        }
    }

    /// What a device computes for `chunked`: float32 sums in that order.
    fn chunked_f32(xs: &[f32]) -> f32 {
        xs.chunks(256)
            .map(|c| c.iter().fold(0.0f32, |a, x| a + x))
            .fold(0.0, |a, p| a + p)
    }

    fn sequential_f32(xs: &[f32]) -> f32 {
        xs.iter().fold(0.0f32, |a, x| a + x)
    }

    fn one(x: f32) -> Value {
        Value::Array(vec![Value::Float(x)])
    }

    /// Deterministic floats in [0, 1).
    fn noise(n: usize) -> Vec<f32> {
        let mut s = 0x2545_f491_u32;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / 16_777_216.0
            })
            .collect()
    }

    /// 2^24 followed by ones: a float32 sum in sequence never moves from 2^24 (each `+ 1` rounds
    /// back), while a partial reduction keeps most of the ones. Both are legal orders for
    /// `reduce`, 0.4% apart: far beyond the old fixed 1e-3 tolerance.
    #[test]
    fn a_reassociated_large_sum_passes() {
        let mut xs = vec![1.0f32; 65_536];
        xs[0] = 16_777_216.0;
        let reference = bounded(SUM, &xs);
        let variant = bounded(&chunked("0.0f"), &xs);
        let (seq, part) = (sequential_f32(&xs), chunked_f32(&xs));
        assert_eq!(seq, 16_777_216.0);
        assert!(
            !crate::values_close(&one(seq), &one(part), 1e-3),
            "{seq} and {part} are close"
        );
        let c = check_result(&reference, &variant, &one(part));
        assert!(matches!(c, Check::Ok { .. }), "partial reduction: {c:?}");
        // The naive program's `reduce` may be lowered in any order, the sequential one included.
        let c = check_result(&reference, &reference, &one(seq));
        assert!(matches!(c, Check::Ok { .. }), "sequential sum of the program: {c:?}");
        let c = check_result(&reference, &reference, &one(part));
        assert!(matches!(c, Check::Ok { .. }), "partial sums of the program: {c:?}");
        // The partial reduction's own order is pinned down, so its bound is much tighter.
        assert!(
            matches!(check_result(&reference, &variant, &one(seq)), Check::Wrong(_)),
            "the sequential result is not what the partial reduction can give"
        );
    }

    #[test]
    fn random_sums_pass_in_every_order() {
        let xs = noise(102_400);
        let reference = bounded(SUM, &xs);
        let variant = bounded(&chunked("0.0f"), &xs);
        let pairwise = |xs: &[f32]| {
            let mut v = xs.to_vec();
            while v.len() > 1 {
                v = v.chunks(2).map(|c| c.iter().sum()).collect();
            }
            v[0]
        };
        let reversed = xs.iter().rev().fold(0.0f32, |a, x| a + x);
        for got in [sequential_f32(&xs), chunked_f32(&xs), pairwise(&xs), reversed] {
            let c = check_result(&reference, &reference, &one(got));
            assert!(matches!(c, Check::Ok { .. }), "{got}: {c:?}");
        }
        let c = check_result(&reference, &variant, &one(chunked_f32(&xs)));
        let Check::Ok { bound, used } = c else { panic!("{c:?}") };
        assert!(bound < 1e-4 && used <= 1.0, "bound {bound}, used {used}");
    }

    /// A device result that misses one element (an off-by-one bound in a kernel) is caught.
    #[test]
    fn a_sum_missing_one_element_fails() {
        let mut xs = noise(4096);
        xs[4095] = 0.75;
        let reference = bounded(SUM, &xs);
        let variant = bounded(&chunked("0.0f"), &xs);
        let short = chunked_f32(&xs[..4095]);
        let c = check_result(&reference, &variant, &one(short));
        assert!(
            matches!(&c, Check::Wrong(w) if w.contains("float32 error bound")),
            "{c:?}"
        );
        let c = check_result(&reference, &reference, &one(short));
        assert!(matches!(c, Check::Wrong(_)), "{c:?}");
    }

    /// A rewrite that changed the value (here a wrong neutral element) is caught in exact
    /// arithmetic, whatever the device returns.
    #[test]
    fn a_wrong_rewrite_fails() {
        let xs = noise(4096);
        let reference = bounded(SUM, &xs);
        let variant = bounded(&chunked("0.001f"), &xs);
        let c = check_result(&reference, &variant, &one(chunked_f32(&xs)));
        assert!(matches!(&c, Check::Wrong(w) if w.contains("exact arithmetic")), "{c:?}");
    }

    /// A calibration that ranks the model's first variants last still leaves them among the
    /// first seeds (sum's one-launch grid reductions, session 9).
    #[test]
    fn the_models_first_variants_are_seeded_whatever_the_calibration() {
        assert_eq!(seed_order(&[5, 4, 3, 2, 1]), vec![5, 1, 4, 2, 3]);
        assert_eq!(seed_order(&[1, 2, 3]), vec![1, 2, 3]);
        assert_eq!(seed_order(&[2, 1]), vec![2, 1]);
        assert!(seed_order(&[]).is_empty());
    }

    /// The calibration recovers the coefficients of timings made with them, whatever each
    /// program's own constant; the prior holds a feature that never varies at its value.
    #[test]
    fn calibration_fits_coefficients_across_programs() {
        let truth = [0.8, -0.5, 0.3];
        let mut points = vec![];
        for (p, constant) in [("a", 1.0), ("b", -4.0), ("c", 7.5)] {
            for i in 0..12 {
                let f = [(i % 5) as f64 * 0.7, ((i * 7) % 4) as f64 - 1.5, (i % 3) as f64];
                let y = constant + truth.iter().zip(f).map(|(c, x)| c * x).sum::<f64>();
                points.push((p.to_string(), f, y));
            }
        }
        let (coef, programs) = fit(&points).expect("a fit");
        assert_eq!(programs, 3);
        for (c, t) in coef.iter().zip(truth) {
            assert!((c - t).abs() < 0.05, "{coef:?} against {truth:?}");
        }
        // the number of kernels never varies: its coefficient stays at the prior's 0
        let flat: Vec<_> = points
            .iter()
            .map(|(p, f, y)| (p.clone(), [f[0], f[1], 2.0], *y))
            .collect();
        let (coef, _) = fit(&flat).expect("a fit");
        assert_eq!(coef[2], 0.0, "{coef:?}");
        assert!(fit(&points[..3]).is_none());
    }

    /// A configuration with its sizes as kernel arguments ranks first only when it is faster
    /// than the built-in one by more than [`ARGUMENTS_MARGIN`] (convolution_row's 7 %, not a
    /// timing's noise).
    #[test]
    fn sizes_as_arguments_rank_first_only_when_clearly_faster() {
        let row = |ms: f64, built_in: bool| Row {
            started_s: 0.0,
            ended_s: 0.0,
            device: "d".into(),
            device_index: 0,
            variant: 1,
            work_group: vec![],
            try_no: 1,
            found_by: "seed (cost model)",
            median_ms: Some(ms),
            check: Check::Ok { bound: 0.0, used: 0.0 },
            error: String::new(),
            description: String::new(),
            resumed: false,
            secs: 0.0,
            cut: None,
            built_in,
        };
        let first = |a: &Row, b: &Row| a.rank_key().1 < b.rank_key().1;
        assert!(first(&row(0.3957, false), &row(0.4257, true)));
        assert!(!first(&row(0.995, false), &row(1.0, true)));
        assert!(first(&row(1.0, true), &row(0.995, false)));
        assert!(row(1.0, false).note().contains("sizes as kernel arguments"));
    }

    /// The search's mutations never repeat a configuration, and exhaust the space.
    #[test]
    fn mutations_cover_every_configuration_once() {
        let row = |variant: usize, ms: f64| Row {
            started_s: 0.0,
            ended_s: 0.0,
            device: "d".into(),
            device_index: 0,
            variant,
            work_group: vec![],
            try_no: variant + 1,
            found_by: "seed (cost model)",
            median_ms: Some(ms),
            check: Check::Ok { bound: 0.0, used: 0.0 },
            error: String::new(),
            description: String::new(),
            resumed: false,
            secs: 0.0,
            cut: None,
            built_in: true,
        };
        let rows = vec![row(0, 3.0), row(1, 1.0)];
        let order = [1, 2, 3];
        let mut tried = vec![
            Config {
                variant: 0,
                work_group: vec![],
            },
            Config {
                variant: 1,
                work_group: vec![],
            },
        ];
        let mut rng = Rng(7);
        while let Some((c, how)) = mutate(&rows, 0, &tried, &order, &mut rng) {
            assert!(!tried.contains(&c), "{c:?} again ({how})");
            tried.push(c);
        }
        assert_eq!(tried.len(), 4 * (WORK_GROUPS.len() + 1), "{tried:?}");
    }

    /// Elementwise results shifted by one element are caught at the first element.
    #[test]
    fn a_shifted_map_fails() {
        let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x 3.0f)) xs)))";
        let xs = noise(64);
        let reference = bounded(src, &xs);
        let right: Vec<f32> = xs.iter().map(|x| x * 3.0).collect();
        let arr = |v: &[f32]| Value::Array(v.iter().map(|x| Value::Float(*x)).collect());
        assert!(matches!(
            check_result(&reference, &reference, &arr(&right)),
            Check::Ok { .. }
        ));
        let mut shifted = right[1..].to_vec();
        shifted.push(0.0);
        let c = check_result(&reference, &reference, &arr(&shifted));
        assert!(matches!(&c, Check::Wrong(w) if w.starts_with("element [0]")), "{c:?}");
        let c = check_result(&reference, &reference, &arr(&right[1..]));
        assert!(matches!(&c, Check::Wrong(w) if w.contains("length 63")), "{c:?}");
    }

    /// What cannot be checked says so: a comparison that rounding could flip, or a variant
    /// beyond the step limit.
    #[test]
    fn unverifiable_results_are_reported_unchecked() {
        let src = "(lift (N) ((array-type float N)) \
                   (lambda (xs) (map (lambda (x) (if (< (+ x 0.1f) 0.6f) 1.0f 0.0f)) xs)))";
        let c = bounded_eval(src, &inputs(&[0.5]), CHECK_STEPS).unwrap();
        assert!(
            matches!(&c, Err(Check::Unchecked(w)) if w.contains("rounding")),
            "{c:?}"
        );
        let c = bounded_eval(SUM, &inputs(&noise(1000)), 100).unwrap();
        assert!(
            matches!(&c, Err(Check::Unchecked(w)) if w.contains("--check-steps")),
            "{c:?}"
        );
        // Integers are compared exactly.
        let ints = Value::Array(vec![Value::Int(3)]);
        let c = check_result(&ints, &ints, &Value::Array(vec![Value::Int(4)]));
        assert!(matches!(c, Check::Wrong(_)), "{c:?}");
    }

    /// A clock the test moves: seconds as the bits of an f64.
    fn fake_clock() -> (
        std::sync::Arc<std::sync::atomic::AtomicU64>,
        Box<dyn Fn() -> f64 + Send + Sync>,
    ) {
        let t = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0f64.to_bits()));
        let read = t.clone();
        (
            t,
            Box::new(move || f64::from_bits(read.load(std::sync::atomic::Ordering::SeqCst))),
        )
    }

    fn advance(t: &std::sync::atomic::AtomicU64, secs: f64) {
        let now = f64::from_bits(t.load(std::sync::atomic::Ordering::SeqCst));
        t.store((now + secs).to_bits(), std::sync::atomic::Ordering::SeqCst);
    }

    /// A search's steps as `tune_with` takes them, against a fake runner: `costs[i]` is what
    /// measuring configuration `i` (of variant `i % 3`) takes. Returns the configurations
    /// measured (or cut) and the clock at the end.
    fn fake_search(budget_s: f64, costs: &[f64]) -> (Vec<(usize, bool)>, f64) {
        let (t, clock) = fake_clock();
        let mut budget = Budget::new(Some(std::time::Duration::from_secs_f64(budget_s)), clock);
        let limit = std::time::Duration::from_secs_f64(TIME_LIMIT_S);
        let mut done = vec![];
        for (i, &cost) in costs.iter().enumerate() {
            let Some(this_limit) = budget.admit(i % 3, 0.0, done.is_empty(), limit) else {
                continue;
            };
            if cost > this_limit.as_secs_f64() {
                // abandoned at its limit: the device is busy, the search ends
                advance(&t, this_limit.as_secs_f64());
                done.push((i, true));
                break;
            }
            advance(&t, cost);
            budget.trial(i % 3, cost);
            done.push((i, false));
        }
        (done, f64::from_bits(t.load(std::sync::atomic::Ordering::SeqCst)))
    }

    /// Whatever the configurations cost, a budgeted search ends within its budget: each one is
    /// started only where its estimate (from what was seen) ends within the search's share.
    #[test]
    fn a_budgeted_search_stops_within_its_budget() {
        let (done, end) = fake_search(10.0, &[1.0; 40]);
        assert!(end <= 10.0 * SEARCH_SHARE, "{end}");
        assert_eq!(done.len(), 8, "{done:?}");
        // A variant seen to be expensive (a long build) is left out, cheaper ones go on.
        let costs: Vec<f64> = (0..40).map(|i| if i % 3 == 2 { 4.0 } else { 0.5 }).collect();
        let (done, end) = fake_search(10.0, &costs);
        assert!(end <= 10.0, "{end}");
        assert_eq!(done.iter().filter(|(i, _)| i % 3 == 2).count(), 1, "{done:?}");
        assert!(done.len() >= 9, "{done:?}");
    }

    /// A configuration that would run past the budget is cut at its end, the first one too.
    #[test]
    fn a_slow_configuration_is_cut_at_the_budget() {
        let (done, end) = fake_search(10.0, &[100.0, 1.0]);
        assert_eq!(done, vec![(0, true)]);
        assert!((end - 10.0 * FINISH_SHARE).abs() < 1e-9, "{end}");
        let (done, end) = fake_search(10.0, &[1.0, 1.0, 1.0, 1.0, 30.0, 1.0]);
        assert_eq!(done.last(), Some(&(4, true)), "{done:?}");
        assert!(end <= 10.0 * FINISH_SHARE, "{end}");
        // Without a budget nothing is cut but by the time limit.
        let (_, clock) = fake_clock();
        let b = Budget::new(None, clock);
        assert_eq!(
            b.admit(0, 1e9, false, std::time::Duration::from_secs(600)),
            Some(std::time::Duration::from_secs(600))
        );
    }

    /// Re-timing a leader costs its first measurement again plus the runs beyond the first:
    /// a slow configuration's five runs do not fit where a fast one's do.
    #[test]
    fn retiming_estimates_its_runs() {
        let (t, clock) = fake_clock();
        let b = Budget::new(Some(std::time::Duration::from_secs(10)), clock);
        advance(&t, 6.0);
        assert!(b.admits(1.0, Budget::retime_cost(1.0, 10.0, 5)));
        assert!(!b.admits(1.0, Budget::retime_cost(1.0, 1500.0, 5)));
        // Without a budget, a configuration whose first run is already SLOW_CUT times the best
        // is run only once.
        assert!(slow(3.5, 1.0) && !slow(2.5, 1.0));
    }

    fn flat_bytes(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Float(f) => out.extend(f.to_le_bytes()),
            Value::Double(d) => out.extend(d.to_le_bytes()),
            Value::Int(i) => out.extend(i.to_le_bytes()),
            Value::Bool(b) => out.extend(i32::from(*b).to_le_bytes()),
            Value::Uint(u) => out.extend(u.to_le_bytes()),
            Value::Long(l) => out.extend(l.to_le_bytes()),
            Value::Ulong(u) => out.extend(u.to_le_bytes()),
            Value::Array(xs) | Value::Vector(xs) | Value::Tuple(xs) => xs.iter().for_each(|x| flat_bytes(x, out)),
            Value::Approx(a) => out.extend(a.value.to_le_bytes()),
        }
    }

    /// A tune without checks gets the same random numbers as buffer bytes, not values: its
    /// arrays of scalars (md's neighbour indices), of vectors (md's float4 particles) and of
    /// tuples (nn's pairs) as bytes, its scalars still as values, drawn in the same order.
    #[test]
    fn lean_inputs_are_the_same_numbers() {
        lean_inputs_of("md_rows", &[("N", 64), ("M", 8)], 2);
        lean_inputs_of("nn", &[("N", 64)], 1);
    }

    fn lean_inputs_of(name: &str, sizes: &[(&str, i64)], arrays: usize) {
        let src = std::fs::read_to_string(format!("../../bench/cgo17/{name}.lisp")).unwrap();
        let prog = compile(&src, &Options::types_only()).unwrap().given;
        let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let full = data::random_inputs(&prog, &sizes, 42).unwrap();
        let (lean, bytes) = data::random_inputs_lean(&prog, &sizes, 42, false).unwrap();
        assert_eq!(bytes.len(), full.values.len());
        let mut as_bytes = 0;
        for (k, b) in bytes.iter().enumerate() {
            match b {
                Some(b) => {
                    let mut want = vec![];
                    flat_bytes(&full.values[k], &mut want);
                    assert_eq!(b, &want, "parameter {k}");
                    assert_eq!(lean.values[k], Value::Array(vec![]));
                    as_bytes += 1;
                }
                None => assert_eq!(lean.values[k], full.values[k], "parameter {k}"),
            }
        }
        assert!(
            as_bytes == arrays && as_bytes < bytes.len(),
            "{as_bytes} of {}",
            bytes.len()
        );
        // With values kept, nothing is given as bytes.
        let (kept, bytes) = data::random_inputs_lean(&prog, &sizes, 42, true).unwrap();
        assert!(bytes.iter().all(Option::is_none));
        assert_eq!(kept.values, full.values);
    }
}
