//! `lift explore` and `lift tune`: rewrite exploration (crate `rewrite`) and autotuning sweeps of
//! its variants across OpenCL devices, with a tuning cache of the best variant per program,
//! sizes and device.

use crate::{backend, data, front, parse_sizes, values_close, Error};
use ir::interp::Value;
use ir::Diagnostic;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `lift explore`: the variants found, with their estimated costs and the e-graph statistics.
pub fn explore_text(src: &str, opts: &rewrite::Options) -> Result<String, Error> {
    let (prog, info) = front(src)?;
    Ok(rewrite::explore(&prog, &info, opts)?.to_string())
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
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes).ok()?.into_iter().collect();
    let cache = read_cache(&cache_path()?);
    let entry = cache.get(&cache_key(src, &sizes, device_name))?;
    entry.get("source")?.as_str().map(str::to_string)
}

fn store_best(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str, entry: serde_json::Value) {
    let Some(path) = cache_path() else { return };
    let mut cache = read_cache(&path);
    cache.insert(cache_key(src, sizes, device_name), entry);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(cache)).unwrap_or_default();
    // Write then rename, so a concurrent reader never sees half a file.
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// One measured (variant, device) pair.
struct Row {
    device: String,
    variant: usize,
    median_ms: Option<f64>,
    correct: bool,
    note: String,
    description: String,
}

/// Inputs with at most this many scalars are checked against the interpreter; larger runs are
/// checked against the naive variant's result on the same device (the interpreter would take
/// minutes on, e.g., a 1024³ matrix product).
const INTERP_LIMIT: usize = 1 << 20;

fn scalars(v: &Value) -> usize {
    match v {
        Value::Array(xs) | Value::Tuple(xs) | Value::Vector(xs) => xs.iter().map(scalars).sum(),
        _ => 1,
    }
}

/// `lift tune`: explores `src`, runs the naive program (variant 0) and the `top_k` best variants
/// on each chosen device with random inputs of the given sizes, checks every result, and
/// prints a ranked table per device. Writes CSV (or JSON when the path ends in `.json`) if
/// asked, and stores the fastest correct variant per device in the tuning cache.
pub fn tune(
    src: &str,
    sizes: &[String],
    devices: &[String],
    top_k: usize,
    repeats: usize,
    out_csv: Option<&Path>,
) -> Result<String, Error> {
    let (prog, info) = front(src)?;
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let opts = rewrite::Options {
        sizes: sizes.clone(),
        top_k,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts)?;
    let mut cands: Vec<(String, String)> = vec![(src.to_string(), "naive default lowering of the program".into())];
    cands.extend(ex.variants.iter().map(|v| (v.source.clone(), v.description.clone())));

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

    let inputs = data::random_inputs(&prog, &sizes, 42)?;
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    for c in &info.checks {
        c.verify(&lookup)
            .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
    }
    let small = inputs.values.iter().map(scalars).sum::<usize>() <= INTERP_LIMIT;
    let interp = if small {
        Some(
            ir::interp::eval(&prog, &inputs.values, &lookup)
                .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?,
        )
    } else {
        None
    };

    let mut rows = vec![];
    let total = chosen.len() * cands.len();
    let mut done = 0;
    for dev in &chosen {
        let mut reference = interp.clone();
        for (i, (source, description)) in cands.iter().enumerate() {
            done += 1;
            eprintln!("[{done}/{total}] {} ({}): variant {i}", dev.name, dev.id);
            let mut row = Row {
                device: dev.name.clone(),
                variant: i,
                median_ms: None,
                correct: false,
                note: String::new(),
                description: description.clone(),
            };
            match measure(source, &inputs, &dev.id, repeats) {
                Ok((value, ms)) => {
                    if reference.is_none() && i == 0 {
                        reference = Some(value.clone());
                    }
                    row.correct = reference.as_ref().is_some_and(|r| values_close(r, &value, 1e-3));
                    row.median_ms = Some(ms);
                    if !row.correct {
                        row.note = "WRONG RESULT".into();
                    }
                }
                Err(e) => row.note = format!("skipped: {}", e.message().lines().next().unwrap_or("")),
            }
            rows.push(row);
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "sizes: {}; {} variants (e-graph {} nodes, {} classes); results checked against {}",
        sizes_text(&sizes),
        cands.len(),
        ex.stats.nodes,
        ex.stats.classes,
        if small { "the interpreter" } else { "the naive variant" }
    );
    for dev in &chosen {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.device == dev.name).collect();
        let naive = mine.iter().find(|r| r.variant == 0).and_then(|r| r.median_ms);
        let mut ranked: Vec<&&Row> = mine.iter().collect();
        ranked.sort_by(|a, b| {
            let key = |r: &Row| {
                if r.correct {
                    r.median_ms.unwrap_or(f64::INFINITY)
                } else {
                    f64::INFINITY
                }
            };
            key(a).total_cmp(&key(b)).then(a.variant.cmp(&b.variant))
        });
        let _ = writeln!(out, "\ndevice {} ({})", dev.name, dev.id);
        let _ = writeln!(
            out,
            "{:>4} {:>7} {:>12} {:>9}  description",
            "rank", "variant", "median ms", "speed-up"
        );
        for (rank, r) in ranked.iter().enumerate() {
            let ms = r.median_ms.map_or("-".to_string(), |m| format!("{m:.4}"));
            let sp = match (naive, r.median_ms) {
                (Some(n), Some(m)) if m > 0.0 => format!("{:.2}x", n / m),
                _ => "-".into(),
            };
            let desc = if r.note.is_empty() {
                r.description.clone()
            } else {
                format!("{} [{}]", r.description, r.note)
            };
            let _ = writeln!(out, "{:>4} {:>7} {ms:>12} {sp:>9}  {desc}", rank + 1, r.variant);
        }
        if let Some(best) = ranked.first().filter(|r| r.correct && r.median_ms.is_some()) {
            store_best(
                src,
                &sizes,
                &dev.name,
                serde_json::json!({
                    "source": cands[best.variant].0,
                    "variant": best.variant,
                    "median_ms": best.median_ms,
                    "naive_ms": naive,
                }),
            );
        }
    }
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
                    "speedup": speedup(r), "correct": r.correct, "note": r.note, "description": r.description,
                })
            })
            .collect();
        serde_json::to_string_pretty(&arr).unwrap_or_default()
    } else {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut t = String::from("device,variant,median_ms,speedup,correct,note,description\n");
        for r in rows {
            let _ = writeln!(
                t,
                "{},{},{},{},{},{},{}",
                q(&r.device),
                r.variant,
                r.median_ms.map_or(String::new(), |m| format!("{m:.6}")),
                speedup(r).map_or(String::new(), |s| format!("{s:.4}")),
                r.correct,
                q(&r.note),
                q(&r.description)
            );
        }
        t
    };
    std::fs::write(path, text).map_err(|e| Error::plain(format!("cannot write {}: {e}", path.display())))
}

/// Compiles and runs one variant: its result and the median over `repeats` of its kernels' total time.
fn measure(source: &str, inputs: &data::Inputs, device: &str, repeats: usize) -> Result<(Value, f64), Error> {
    let (prog, info) = front(source)?;
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    for c in &info.checks {
        c.verify(&lookup)
            .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
    }
    let plan = codegen_opencl::emit(&prog, &info)?;
    let m = backend::run_measured(&plan, inputs, Some(device), true, repeats.max(1), false)?;
    let ns: u64 = m.kernel_ns.iter().map(|(_, t)| *t).sum();
    Ok((m.value, ns as f64 / 1e6))
}
