//! `lift explore` and `lift tune`: rewrite exploration (crate `rewrite`) and autotuning sweeps of
//! its variants across OpenCL devices, with a tuning cache of the best variant per program,
//! sizes and device.

use crate::{backend, compile, compile_program, data, parse_sizes, verify_checks, Error, Options};
use ir::interp::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `lift explore`: the variants found, with their estimated costs and the e-graph statistics.
pub fn explore_text(src: &str, opts: &rewrite::Options) -> Result<String, Error> {
    let c = compile(src, &types_only())?;
    Ok(rewrite::explore(&c.given, &c.given_info, opts)?.to_string())
}

fn types_only() -> Options {
    Options {
        types_only: true,
        ..Options::default()
    }
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
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes).ok()?.into_iter().collect();
    let cache = read_cache(&cache_path()?);
    let entry = cache.get(&cache_key(src, &sizes, device_name))?;
    let source = entry.get("source")?.as_str()?.to_string();
    let description = entry
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or("")
        .to_string();
    Some((source, description))
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
}

impl Record {
    fn new(src: &str, sizes: &BTreeMap<String, i64>) -> Record {
        Record {
            key: format!("measured|{:016x}|{}", fnv1a64(src.as_bytes()), sizes_text(sizes)),
        }
    }

    fn slot(&self, device_name: &str) -> String {
        format!("{}|{device_name}", self.key)
    }

    fn variant_key(source: &str) -> String {
        format!("{:016x}", fnv1a64(source.as_bytes()))
    }

    /// The recorded measurement of `source` on the device, as a row.
    fn lookup(&self, device_name: &str, source: &str) -> Option<(f64, Check)> {
        let cache = read_cache(&cache_path()?);
        let entry = cache.get(&self.slot(device_name))?.get(Record::variant_key(source))?;
        let ms = entry.get("median_ms")?.as_f64()?;
        Some((ms, check_from_json(entry.get("check")?)?))
    }

    fn store(&self, device_name: &str, source: &str, ms: f64, check: &Check) {
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
                    Record::variant_key(source),
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

/// One measured (variant, device) pair.
struct Row {
    device: String,
    device_index: usize,
    variant: usize,
    median_ms: Option<f64>,
    check: Check,
    /// Why it did not run, when it did not.
    error: String,
    description: String,
}

impl Row {
    fn correct(&self) -> bool {
        matches!(self.check, Check::Ok { .. })
    }
    fn note(&self) -> String {
        match &self.check {
            Check::NotRun => format!("skipped: {}", self.error),
            c => c.note(),
        }
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
        &compile(src, &types_only())?.given,
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

/// The progress of `lift tune` on stderr: one line redrawn in place, only when stderr is a
/// terminal, so that redirected output and test logs stay clean.
struct Progress {
    total: usize,
    done: usize,
    start: std::time::Instant,
    on: bool,
}

impl Progress {
    fn new(total: usize) -> Progress {
        use std::io::IsTerminal;
        Progress {
            total,
            done: 0,
            start: std::time::Instant::now(),
            on: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, what: &str) {
        if !self.on {
            return;
        }
        const WIDTH: usize = 24;
        let filled = WIDTH * self.done / self.total.max(1);
        let what: String = what.chars().take(70).collect();
        eprint!(
            "\r\x1b[2K[{}{}] {}/{} {:>4}s  {what}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.done,
            self.total,
            self.start.elapsed().as_secs()
        );
        let _ = std::io::Write::flush(&mut std::io::stderr());
    }

    fn advance(&mut self) {
        self.done += 1;
    }

    fn finish(&mut self) {
        if self.on {
            eprint!("\r\x1b[2K");
            self.on = false;
        }
    }
}

/// Clears the line also when `tune` returns early with an error, before the error is printed.
impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `lift tune`: explores `src`, runs the naive program (variant 0) and the `top_k` best variants
/// on each chosen device with random inputs of the given sizes, checks every result against
/// the reference interpreter (at most `check_steps` steps per variant; see [`check_result`]),
/// and prints a ranked table per device. Writes CSV (or JSON when the path ends in `.json`) if
/// asked, and stores the fastest correct variant per device in the tuning cache.
pub fn tune(
    src: &str,
    sizes: &[String],
    devices: &[String],
    top_k: usize,
    repeats: usize,
    check_steps: u64,
    out_csv: Option<&Path>,
) -> Result<String, Error> {
    let given = compile(src, &types_only())?;
    let (prog, info) = (&given.given, &given.given_info);
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let opts = rewrite::Options {
        sizes: sizes.clone(),
        top_k,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(prog, info, &opts)?;
    // (source, description, program)
    let mut cands: Vec<(String, String, &ir::Program)> =
        vec![(src.to_string(), "naive default lowering of the program".into(), prog)];
    cands.extend(
        ex.variants
            .iter()
            .map(|v| (v.source.clone(), v.description.clone(), &v.program)),
    );

    let all = host_runner::devices().map_err(|e| Error::plain(e.to_string()))?;
    let chosen: Vec<host_runner::DeviceInfo> = if devices.is_empty() || devices.iter().any(|d| d == "all") {
        all
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

    let mut progress = Progress::new(chosen.len() * cands.len());
    progress.show("generating random inputs");
    // Shared with the thread that measures a variant, which a time limit may abandon.
    let inputs = std::sync::Arc::new(data::random_inputs(prog, &sizes, 42)?);
    let limit = time_limit()?;
    verify_checks(info, &inputs)?;

    let record = Record::new(src, &sizes);
    let mut resumed = 0;
    let mut rows = vec![];
    let mut reference: Option<Bounded> = None;
    for (i, (source, description, program)) in cands.iter().enumerate() {
        let row = |k: usize, dev: &host_runner::DeviceInfo| Row {
            device: dev.name.clone(),
            device_index: k,
            variant: i,
            median_ms: None,
            check: Check::NotRun,
            error: String::new(),
            description: description.clone(),
        };
        let recorded: Vec<Option<(f64, Check)>> = chosen.iter().map(|dev| record.lookup(&dev.name, source)).collect();
        if recorded.iter().all(Option::is_some) {
            for (k, (dev, rec)) in chosen.iter().zip(recorded).enumerate() {
                let (ms, check) = rec.expect("checked above");
                rows.push(Row {
                    median_ms: Some(ms),
                    check,
                    ..row(k, dev)
                });
                resumed += 1;
                progress.advance();
            }
            continue;
        }
        // The program's own value (variant 0) is the reference for every variant measured
        // in this run.
        if reference.is_none() && check_steps > 0 {
            progress.show("variant 0: interpreting with error bounds");
            let r = bounded_eval_program(cands[0].2, &inputs, check_steps);
            if let Err(Check::Wrong(why)) = &r {
                // The program itself fails on these inputs: that is the user's error to see.
                return Err(Error::plain(why.replace("on this variant", "on the random inputs")));
            }
            reference = Some(r);
        }
        // Interpreted once per variant, and before its runs, so that only one interpreted value
        // is alive at a time (they can be as large as the inputs).
        let checked = if check_steps == 0 {
            Err(Check::Unchecked("checking is off (--check-steps 0)".into()))
        } else if let Some(Err(e)) = &reference {
            // Without the program's own value there is nothing to compare a variant with.
            Err(e.clone())
        } else if i == 0 {
            reference.clone().expect("interpreted above")
        } else {
            progress.show(&format!("variant {i}: interpreting with error bounds"));
            bounded_eval_program(program, &inputs, check_steps)
        };
        // Several devices (issue 14): the devices that still need this variant measure it at
        // once, one thread each; a device left `None` is measured below as before.
        let pending: Vec<bool> = recorded.iter().map(Option::is_none).collect();
        let mut at_once = crate::devices::at_once(&chosen, &pending, |dev: &host_runner::DeviceInfo| {
            measure_within(limit, program, &inputs, &dev.id, repeats)
        });
        if at_once.iter().filter(|m| m.is_some()).count() > 1 {
            progress.show(&format!(
                "variant {i} on {} devices at once: compiling and running",
                at_once.iter().filter(|m| m.is_some()).count()
            ));
        }
        for ((k, dev), rec) in chosen.iter().enumerate().zip(recorded) {
            if let Some((ms, check)) = rec {
                rows.push(Row {
                    median_ms: Some(ms),
                    check,
                    ..row(k, dev)
                });
                resumed += 1;
                progress.advance();
                continue;
            }
            if at_once[k].is_none() {
                progress.show(&format!("variant {i} on {}: compiling and running", dev.id));
            }
            let mut row = row(k, dev);
            let measured = match at_once[k].take() {
                Some(m) => m,
                None => measure_within(limit, program, &inputs, &dev.id, repeats),
            }
            .ok_or_else(|| {
                let kept = rows.iter().filter(|r: &&Row| r.median_ms.is_some()).count();
                Error::plain(format!(
                    "variant {i} did not finish on {} within {} s ({TIME_LIMIT_VAR}); the {kept} result(s) \
                     measured so far are in the tuning cache, and the next run resumes from them",
                    dev.id,
                    limit.as_secs_f64()
                ))
            })?;
            match measured {
                Ok((value, ms)) => {
                    row.median_ms = Some(ms);
                    row.check = match (&reference, &checked) {
                        (Some(Ok(r)), Ok(v)) => check_result(r, v, &value),
                        (Some(Err(e)), _) => match e {
                            Check::Unchecked(why) => Check::Unchecked(format!("{why} (the program itself)")),
                            other => other.clone(),
                        },
                        (_, Err(e)) => e.clone(),
                        (None, _) => Check::Unchecked("no reference".into()),
                    };
                    record.store(&dev.name, source, ms, &row.check);
                }
                Err(e) => row.error = e.message().lines().next().unwrap_or("").to_string(),
            }
            rows.push(row);
            progress.advance();
        }
    }
    progress.finish();
    rows.sort_by_key(|r| (r.device_index, r.variant));

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
    if resumed > 0 {
        let _ = writeln!(
            out,
            "resumed: {resumed} of {} result(s) were measured by an earlier run (tuning cache)",
            rows.len()
        );
    }
    for dev in &chosen {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.device == dev.name).collect();
        let naive = mine.iter().find(|r| r.variant == 0).and_then(|r| r.median_ms);
        let mut ranked: Vec<&&Row> = mine.iter().collect();
        ranked.sort_by(|a, b| {
            // checked variants first, then unchecked ones (still ranked by time), then the rest
            let key = |r: &Row| match r.check {
                Check::Ok { .. } => (0, r.median_ms.unwrap_or(f64::INFINITY)),
                Check::Unchecked(_) => (1, r.median_ms.unwrap_or(f64::INFINITY)),
                Check::Wrong(_) | Check::NotRun => (2, f64::INFINITY),
            };
            let (ka, kb) = (key(a), key(b));
            ka.0.cmp(&kb.0)
                .then(ka.1.total_cmp(&kb.1))
                .then(a.variant.cmp(&b.variant))
        });
        let _ = writeln!(out, "\ndevice {} ({})", dev.name, dev.id);
        let _ = writeln!(
            out,
            "{:>4} {:>7} {:>12} {:>9} {:>9} {:>9}  description",
            "rank", "variant", "median ms", "speed-up", "check", "bound"
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
                "{:>4} {:>7} {ms:>12} {sp:>9} {:>9} {bound:>9}  {desc}",
                rank + 1,
                r.variant,
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
        // The fastest variant that ran and is not known to be wrong: checked ones rank first, so
        // an unchecked one is kept only where nothing could be checked (large sizes with
        // `--check-steps 0`, which `lift bench --check-size` then checks at smaller sizes).
        if let Some(best) = ranked
            .first()
            .filter(|r| r.median_ms.is_some() && !matches!(r.check, Check::Wrong(_) | Check::NotRun))
        {
            store_best(
                src,
                &sizes,
                &dev.name,
                serde_json::json!({
                    "source": cands[best.variant].0,
                    "variant": best.variant,
                    "description": best.description,
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
    if let Some(path) = out_csv {
        write_table(path, &rows, &chosen, &rows_naive(&rows))?;
    }
    Ok(out)
}

fn rows_naive(rows: &[Row]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter(|r| r.variant == 0)
        .filter_map(|r| r.median_ms.map(|m| (r.device.clone(), m)))
        .collect()
}

fn write_table(
    path: &Path,
    rows: &[Row],
    _devices: &[host_runner::DeviceInfo],
    naive: &BTreeMap<String, f64>,
) -> Result<(), Error> {
    let speedup = |r: &Row| match (naive.get(&r.device), r.median_ms) {
        (Some(n), Some(m)) if m > 0.0 => Some(n / m),
        _ => None,
    };
    let text = if path.extension().is_some_and(|e| e == "json") {
        let arr: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "device": r.device, "variant": r.variant, "median_ms": r.median_ms,
                    "speedup": speedup(r), "correct": r.correct(), "check": r.check.label(),
                    "bound": r.check.bound(), "note": r.note(), "description": r.description,
                })
            })
            .collect();
        serde_json::to_string_pretty(&arr).unwrap_or_default()
    } else {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut t = String::from("device,variant,median_ms,speedup,correct,check,bound,note,description\n");
        for r in rows {
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{},{},{}",
                q(&r.device),
                r.variant,
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
fn measure_within(
    limit: std::time::Duration,
    program: &ir::Program,
    inputs: &std::sync::Arc<data::Inputs>,
    device: &str,
    repeats: usize,
) -> Option<Result<(Value, f64), Error>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (program, inputs, device) = (program.clone(), inputs.clone(), device.to_string());
    let spawned = std::thread::Builder::new()
        .name("lift-tune-measure".into())
        .stack_size(ir::STACK_BYTES)
        .spawn(move || {
            let _ = tx.send(measure(&program, &inputs, &device, repeats));
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

/// Compiles and runs one variant: its result and the median over `repeats` of its kernels' total time.
fn measure(prog: &ir::Program, inputs: &data::Inputs, device: &str, repeats: usize) -> Result<(Value, f64), Error> {
    // as written: variant 0 is the naive default lowering of the program
    let opts = Options {
        as_written: true,
        ..Options::default()
    };
    let c = compile_program(prog.clone(), &opts)?;
    verify_checks(&c.info, inputs)?;
    let plan = c.plan.as_ref().ok_or_else(|| Error::plain("internal: no kernels"))?;
    let m = backend::run_measured(plan, inputs, Some(device), true, repeats.max(1), false)?;
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
}
