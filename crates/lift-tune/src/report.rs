//! What `lift tune` prints and writes: the ranked configurations per device, the `--out` table
//! and the `--plot` chart.

use crate::rows::*;
use crate::search::*;
use crate::sweep::*;
use crate::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// What `lift tune` prints: the exploration, then per device its search, its best configuration
/// (stored as the tuning cache's best for the device) and every configuration ranked; and the
/// `--out` table and `--plot` chart.
#[allow(clippy::too_many_arguments)]
pub(crate) fn report(
    src: &str,
    sizes: &BTreeMap<String, i64>,
    cands: &[(String, String, &ir::Program, Option<f64>)],
    ex: &rewrite::Exploration,
    chosen: &[host_runner::DeviceInfo],
    rows: &[Row],
    summaries: &[Summary],
    opts: &TuneOptions,
) -> Result<String, Error> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "sizes: {}; {} variants (e-graph {} nodes, {} classes); results checked against the interpreter \
         (f64, with float32 error bounds for each variant's order of evaluation)",
        sizes_text(sizes),
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
        // A tf32 sweep's best is recorded apart (`lift_compile::cache::precision_key`): `lift
        // run --precision f32` must never take a tensor-core variant.
        if let Some(best) = ranked.first().filter(|r| r.usable()) {
            store_best(
                src,
                sizes,
                &lift_compile::cache::precision_key(&dev.name, opts.precision),
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
    if opts.precision != ir::Precision::F32 {
        let _ = writeln!(
            out,
            "\nat --precision {}: checked within its error bounds; recorded in the tuning cache for runs at --precision {} only",
            opts.precision, opts.precision
        );
    }
    let _ = writeln!(
        out,
        "\ncheck: ok = every element within its float32 error bound; bound = the largest such bound relative to \
         the largest element (it grows with the lengths of the variant's sequential reductions)"
    );
    if let Some(path) = &opts.out {
        write_table(path, rows)?;
    }
    if let Some(path) = &opts.plot {
        plot_sweep(path, rows, chosen)?;
    }
    Ok(out)
}

/// The sweep as an SVG chart: the time of every configuration tried, in the order tried (one
/// series per device), the best of each device marked.
pub(crate) fn plot_sweep(path: &Path, rows: &[Row], devices: &[host_runner::DeviceInfo]) -> Result<(), Error> {
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
pub(crate) fn rows_naive(rows: &[Row]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter(|r| r.variant == 0 && r.work_group.is_empty())
        .filter_map(|r| r.median_ms.map(|m| (r.device.clone(), m)))
        .collect()
}

pub(crate) fn write_table(path: &Path, rows: &[Row]) -> Result<(), Error> {
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
