//! `bench-report`: turns one run of `scripts/bench-suite.sh` into the suite's table and chart.
//!
//! Inputs, all from the same run on the same GPU:
//! - the suite manifest (`bench/cgo17/suite.tsv`): one row per program and layout;
//! - a folder with `<key>.json` (the output of `lift bench --json`) or `<key>.err` (why lift
//!   could not time it) per row, `<key>.tune` (the output of `lift tune`, when it ran), and
//!   `anchors.jsonl` (`scripts/anchors.py`).
//!
//! Output: a Markdown file with the table (`benchmark | size | lift (ms) | variant | model rank of
//! the tuned best | best anchor | anchor (ms) | lift ÷ anchor`), a second table with the bandwidth unit and the checks, and the
//! raw JSON; and an SVG chart of lift ÷ anchor per benchmark on a log scale with the 1.0 line.
//! The report never invents a figure: a missing measurement is printed as missing, with why.

use plotters::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One row of the suite manifest.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    key: String,
    benchmark: String,
    layout: String,
    file: String,
    large: String,
}

/// What the run measured for one row.
#[derive(Clone, Debug)]
struct Row {
    entry: Entry,
    lift: Result<Value, String>,
    anchor: Option<Value>,
    /// `lift tune`'s output for this row, when it ran.
    tune: Option<String>,
}

fn parse_suite(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 6 {
            return Err(format!(
                "suite manifest line {}: expected 6 tab-separated columns (key, benchmark, layout, file, large sizes, medium sizes), found {}",
                i + 1,
                cols.len()
            ));
        }
        out.push(Entry {
            key: cols[0].to_string(),
            benchmark: cols[1].to_string(),
            layout: cols[2].to_string(),
            file: cols[3].to_string(),
            large: cols[4].to_string(),
        });
    }
    Ok(out)
}

fn parse_anchors(text: &str) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| format!("anchors line {}: {e}", i + 1))?;
        let name = v["benchmark"]
            .as_str()
            .ok_or_else(|| format!("anchors line {}: no \"benchmark\"", i + 1))?
            .to_string();
        out.insert(name, v);
    }
    Ok(out)
}

fn load_rows(entries: &[Entry], raw: &Path, anchors: &BTreeMap<String, Value>) -> Vec<Row> {
    entries
        .iter()
        .map(|e| {
            let json = raw.join(format!("{}.json", e.key));
            let err = raw.join(format!("{}.err", e.key));
            let lift = match std::fs::read_to_string(&json) {
                Ok(t) => serde_json::from_str::<Value>(&t).map_err(|x| format!("unreadable lift output: {x}")),
                Err(_) => Err(std::fs::read_to_string(&err)
                    .map(|t| first_line(&t))
                    .unwrap_or_else(|_| "not run".to_string())),
            };
            Row {
                entry: e.clone(),
                lift,
                anchor: anchors.get(&e.benchmark).cloned(),
                tune: std::fs::read_to_string(raw.join(format!("{}.tune", e.key))).ok(),
            }
        })
        .collect()
}

/// Where the variant `lift tune` timed fastest stands in the cost model's order, from its output:
/// `best: variant V (cost-model rank R…)` and the rows of its table (the variants timed: the
/// program as written, variant 0, and the cost model's first ones): `R of N timed`, N the cost
/// model's variants among them, or `as written` when the default lowering of the program won.
/// `None` without a best (nothing ran).
fn model_rank(tune: &str) -> Option<String> {
    let best = tune.lines().find_map(|l| l.strip_prefix("best: variant "))?;
    let within = best.split_once('(')?.1;
    let timed: std::collections::BTreeSet<u64> = tune
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("rank variant"))
        .skip(1)
        .map_while(|l| {
            let mut cols = l.split_whitespace();
            cols.next()?.parse::<u64>().ok()?;
            cols.next()?.parse::<u64>().ok()
        })
        .filter(|&v| v != 0)
        .collect();
    if within.starts_with("as written") {
        return Some("as written".into());
    }
    let rank: usize = within
        .strip_prefix("cost-model rank ")?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some(format!("{rank} of {} timed", timed.len()))
}

/// The table cell of the model rank: only where the timed variant is the tuned one.
fn rank_cell(r: &Row) -> String {
    let tuned = r.lift.as_ref().ok().and_then(|v| v["tuned"].as_bool()) == Some(true);
    match r.tune.as_deref().and_then(model_rank) {
        Some(rank) if tuned => rank,
        Some(_) | None => "–".into(),
    }
}

/// The first meaningful line of an error, so a table cell stays one line.
fn first_line(t: &str) -> String {
    let line = t
        .lines()
        .map(|l| l.trim().trim_start_matches('×').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("failed");
    line.to_string()
}

/// A Markdown table cell: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn name_of(e: &Entry) -> String {
    if e.layout.is_empty() || e.layout == "-" {
        e.benchmark.clone()
    } else {
        format!("{} ({})", e.benchmark, e.layout)
    }
}

fn ratio(r: &Row) -> Option<f64> {
    let lift = r.lift.as_ref().ok()?["total_ms"].as_f64()?;
    let anchor = r.anchor.as_ref()?["ms"].as_f64()?;
    (anchor > 0.0).then(|| lift / anchor)
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.1}"),
        Some(x) if x >= 1.0 => format!("{x:.3}"),
        Some(x) => format!("{x:.4}"),
        None => "–".into(),
    }
}

fn markdown(rows: &[Row], device: &str, date: &str, svg: Option<&str>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# CGO'17 suite on {device} ({date})\n");
    let _ = writeln!(
        s,
        "Produced by `scripts/bench-suite.sh`: lift's best variant (tuned or the cost model's) \
         against anchors measured in the same run on the same GPU (`scripts/anchors.py`). Device \
         times, medians. The ratio is lift ÷ anchor: below 1.0 lift is faster.\n"
    );
    if let Some(svg) = svg {
        let _ = writeln!(s, "![lift ÷ anchor per benchmark]({svg})\n");
    }
    let _ = writeln!(
        s,
        "| benchmark | size | lift (ms) | variant | model rank of the tuned best | best anchor | anchor (ms) | lift ÷ anchor |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for r in rows {
        let (lift_ms, variant) = match &r.lift {
            Ok(v) => (
                ms(v["total_ms"].as_f64()),
                cell(
                    v["variant"]
                        .as_str()
                        .unwrap_or("as written")
                        .split(" | ")
                        .next()
                        .unwrap_or(""),
                ),
            ),
            Err(e) => ("–".into(), format!("failed: {}", cell(e))),
        };
        let (aname, ams) = match &r.anchor {
            Some(a) => (cell(a["anchor"].as_str().unwrap_or("?")), ms(a["ms"].as_f64())),
            None => ("not measured".into(), "–".into()),
        };
        let rt = ratio(r).map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
        let _ = writeln!(
            s,
            "| {} | {} | {lift_ms} | {variant} | {} | {aname} | {ams} | {rt} |",
            cell(&name_of(&r.entry)),
            cell(&r.entry.large),
            cell(&rank_cell(r))
        );
    }
    let _ = writeln!(s, "\n## Bandwidth unit and checks\n");
    let _ = writeln!(
        s,
        "| benchmark | program | copy of the inputs (ms) | lift ÷ copy | checked against the interpreter | kernels (ms) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for r in rows {
        let (copy, check, kernels) = match &r.lift {
            Ok(v) => {
                let ks: Vec<String> = v["kernels"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|k| format!("{} {}", k["name"].as_str().unwrap_or("?"), ms(k["ms"].as_f64())))
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    v["copy_ms"].as_f64(),
                    cell(v["check"].as_str().unwrap_or("not checked")),
                    ks.join(", "),
                )
            }
            Err(_) => (None, "–".into(), "–".into()),
        };
        let lc = match (&r.lift, copy) {
            (Ok(v), Some(c)) if c > 0.0 => v["total_ms"].as_f64().map(|t| format!("{:.2}", t / c)),
            _ => None,
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {check} | {kernels} |",
            cell(&name_of(&r.entry)),
            r.entry.file,
            ms(copy),
            lc.unwrap_or_else(|| "–".into())
        );
    }
    let _ = writeln!(s, "\n## Raw measurements\n\n```json");
    for r in rows {
        let v = serde_json::json!({
            "key": r.entry.key,
            "benchmark": r.entry.benchmark,
            "layout": r.entry.layout,
            "lift": match &r.lift { Ok(v) => v.clone(), Err(e) => serde_json::json!({"error": e}) },
            "anchor": r.anchor,
        });
        let _ = writeln!(s, "{v}");
    }
    let _ = writeln!(s, "```");
    s
}

/// lift ÷ anchor per benchmark on a log scale, the 1.0 line marked.
fn chart(rows: &[Row], title: &str, path: &Path) -> Result<(), String> {
    let pts: Vec<(String, f64)> = rows
        .iter()
        .filter_map(|r| Some((name_of(&r.entry), ratio(r)?)))
        .collect();
    let lo = pts.iter().map(|p| p.1).fold(1.0f64, f64::min) / 2.0;
    let hi = pts.iter().map(|p| p.1).fold(1.0f64, f64::max) * 2.0;
    let n = rows.len().max(1);
    let root = SVGBackend::new(path, (60 * n as u32 + 200, 480)).into_drawing_area();
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let names: Vec<String> = rows.iter().map(|r| name_of(&r.entry)).collect();
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(110)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, (lo..hi).log_scale())
        .map_err(|x| e(&x))?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 1e-6 && i < names.len() {
                names[i].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
        .y_desc("lift ÷ anchor (log)")
        .draw()
        .map_err(|x| e(&x))?;
    for (i, r) in rows.iter().enumerate() {
        if let Some(v) = ratio(r) {
            let color = if v <= 1.0 { GREEN.mix(0.8) } else { RED.mix(0.7) };
            c.draw_series(std::iter::once(Rectangle::new(
                [(i as f64 + 0.15, 1.0), (i as f64 + 0.85, v)],
                color.filled(),
            )))
            .map_err(|x| e(&x))?;
        }
    }
    c.draw_series(LineSeries::new(
        vec![(0.0, 1.0), (n as f64, 1.0)],
        BLACK.stroke_width(2),
    ))
    .map_err(|x| e(&x))?
    .label("1.0: as fast as the anchor");
    c.configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

struct Args {
    suite: PathBuf,
    raw: PathBuf,
    out: PathBuf,
    svg: Option<PathBuf>,
    device: String,
    date: String,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut suite, mut raw, mut out, mut svg, mut device, mut date) = (None, None, None, None, None, None);
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--suite" => suite = Some(PathBuf::from(val()?)),
            "--raw" => raw = Some(PathBuf::from(val()?)),
            "--out" => out = Some(PathBuf::from(val()?)),
            "--svg" => svg = Some(PathBuf::from(val()?)),
            "--device" => device = Some(val()?),
            "--date" => date = Some(val()?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let need = |x: Option<PathBuf>, n: &str| x.ok_or_else(|| format!("missing {n}"));
    Ok(Args {
        suite: need(suite, "--suite")?,
        raw: need(raw, "--raw")?,
        out: need(out, "--out")?,
        svg,
        device: device.unwrap_or_else(|| "unknown device".into()),
        date: date.unwrap_or_else(|| "undated".into()),
    })
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let entries = parse_suite(&read(&args.suite)?)?;
    let anchors = match std::fs::read_to_string(args.raw.join("anchors.jsonl")) {
        Ok(t) => parse_anchors(&t)?,
        Err(_) => BTreeMap::new(),
    };
    let rows = load_rows(&entries, &args.raw, &anchors);
    let svg_name = args
        .svg
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().to_string());
    if let Some(svg) = &args.svg {
        chart(&rows, &format!("lift ÷ anchor, {} ({})", args.device, args.date), svg)?;
    }
    let md = markdown(&rows, &args.device, &args.date, svg_name.as_deref());
    std::fs::write(&args.out, md).map_err(|e| format!("{}: {e}", args.out.display()))?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, bench: &str) -> Entry {
        Entry {
            key: key.into(),
            benchmark: bench.into(),
            layout: "-".into(),
            file: format!("bench/cgo17/{key}.lisp"),
            large: "N=8".into(),
        }
    }

    #[test]
    fn suite_rows_need_six_columns() {
        let ok = parse_suite("# comment\ngemv_n\tgemv N\t-\tbench/cgo17/gemv_n.lisp\tN=8192\tN=64\n").unwrap();
        assert_eq!(
            ok,
            vec![Entry {
                large: "N=8192".into(),
                ..entry("gemv_n", "gemv N")
            }]
        );
        assert!(parse_suite("gemv_n\tgemv N\n").unwrap_err().contains("6 tab-separated"));
    }

    #[test]
    fn table_has_ratio_and_reports_failures() {
        let anchors = parse_anchors(
            "{\"benchmark\":\"sum\",\"anchor\":\"PyTorch (CUB)\",\"ms\":0.1}\n{\"benchmark\":\"mm\",\"anchor\":\"PyTorch (cuBLAS)\",\"ms\":2.0}\n",
        )
        .unwrap();
        let rows = vec![
            Row {
                entry: entry("sum", "sum"),
                lift: Ok(
                    serde_json::json!({"total_ms": 0.15, "variant": "v1", "copy_ms": 0.2, "check": "equal at N=4096", "kernels": [{"name": "K0", "ms": 0.15}]}),
                ),
                anchor: anchors.get("sum").cloned(),
                tune: None,
            },
            Row {
                entry: entry("mm", "mm"),
                lift: Err("not supported yet: x | y".into()),
                anchor: anchors.get("mm").cloned(),
                tune: None,
            },
        ];
        let md = markdown(&rows, "NVIDIA H200", "2026-11-23", Some("c.svg"));
        assert!(
            md.contains("| sum | N=8 | 0.1500 | v1 | – | PyTorch (CUB) | 0.1000 | 1.50 |"),
            "{md}"
        );
        assert!(
            md.contains("| mm | N=8 | – | failed: not supported yet: x \\| y | – | PyTorch (cuBLAS) | 2.000 | – |"),
            "{md}"
        );
        assert!(md.contains("| 0.2000 | 0.75 | equal at N=4096 | K0 0.1500 |"), "{md}");
    }

    #[test]
    fn chart_is_written() {
        let dir = std::env::temp_dir().join(format!("benchreport-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.svg");
        let rows = vec![Row {
            entry: entry("sum", "sum"),
            lift: Ok(serde_json::json!({"total_ms": 0.3})),
            anchor: Some(serde_json::json!({"ms": 0.1, "anchor": "x"})),
            tune: None,
        }];
        chart(&rows, "t", &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("sum"), "{svg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The head of `lift tune`'s output as it prints it (PoCL, k-means as rows).
    const TUNE: &str = "sizes: C=5,F=34,P=8192; 9 variants (e-graph 68 nodes, 57 classes); results checked
\ndevice pthread (0:0)
best: variant 3 (cost-model rank 3), work-group default, found at try 4 by seed (cost model); 1.61x the naive default lowering
calibration of the cost model on this device: ln t = +1.012·ln(cost) + c
rank variant work-group  try    median ms  speed-up     check     bound  description
   1       3    default    4       0.4277     1.61x        ok     0.0e0  mapWrg 2048 groups × mapLcl 4
   2       0    default    1       0.6881     1.00x        ok     0.0e0  naive default lowering of the program
   3       1    default    2       0.9329     0.74x        ok     0.0e0  mapWrg 64 groups × mapLcl 128
   4       2    default    3       1.2006     0.57x        ok     0.0e0  mapWrg 128 groups × mapLcl 64

check: ok = every element within its float32 error bound
";

    #[test]
    fn the_rank_of_the_tuned_best_is_read_from_lift_tune() {
        assert_eq!(model_rank(TUNE).as_deref(), Some("3 of 3 timed"));
        let written = TUNE.replace("variant 3 (cost-model rank 3)", "variant 0 (as written)");
        assert_eq!(model_rank(&written).as_deref(), Some("as written"));
        // a calibrated order is named after the model's own rank
        let calibrated = TUNE.replace("(cost-model rank 3)", "(cost-model rank 3 (calibrated rank 1))");
        assert_eq!(model_rank(&calibrated).as_deref(), Some("3 of 3 timed"));
        assert_eq!(model_rank("tune failed: no device"), None);
        // in the table only where the timed variant is the tuned one
        let row = |tuned: bool| Row {
            entry: entry("kmeans_rows", "k-means"),
            lift: Ok(serde_json::json!({"total_ms": 0.1, "variant": "tuned: v", "tuned": tuned})),
            anchor: None,
            tune: Some(TUNE.into()),
        };
        assert!(markdown(&[row(true)], "d", "t", None).contains("| tuned: v | 3 of 3 timed |"));
        assert!(markdown(&[row(false)], "d", "t", None).contains("| tuned: v | – |"));
    }
}
