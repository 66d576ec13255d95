//! The tuning sweep itself ([`tune_with`]): exploration, inputs, then every device searched on its
//! own thread, sharing the interpreter's reference values.

use crate::calibration::*;
use crate::check::*;
use crate::measure::*;
use crate::progress::*;
use crate::report::*;
use crate::rows::*;
use crate::search::*;
use crate::*;
use std::collections::BTreeMap;

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
    if info.host.launches_from_host() {
        return Err(Error::plain(
            "`lift tune` of a program with host sections (a host `iterate`, `iterate-until` or `if`) is not supported yet; tune the loop body as a program of its own, `lift run --time` times the whole",
        ));
    }
    let sizes: BTreeMap<String, i64> = parse_sizes(sizes)?.into_iter().collect();
    let top_k = opts.top_k.max(1);
    let tf32 = opts.precision == ir::Precision::Tf32;
    let ropts = rewrite::Options {
        sizes: sizes.clone(),
        // a search goes past the seeds, in the model's order; at tf32 past the cut of the
        // variants' kinds too, which keeps one tensor-core tile of the several
        top_k: if opts.budget.is_some() || tf32 {
            top_k.max(24)
        } else {
            top_k
        },
        // every configuration is measured with the sizes built in (`measure`)
        built_in: sizes.clone(),
        // at tf32 every device is one with tensor cores (any other is refused below)
        tensor_cores: opts.precision == ir::Precision::Tf32,
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
    // at tf32 every tensor-core tile (the block and warp shapes the search is for) and the
    // model's `top_k` others
    let mut others = 0;
    let wanted = ex.variants.iter().filter(|v| {
        let tile = tf32 && v.description.contains(rewrite::rules::tensor::TENSOR_CORE_NOTE);
        others += usize::from(!tile);
        tile || others <= top_k || opts.budget.is_some()
    });
    cands.extend(wanted.map(|v| (v.source.clone(), v.description.clone(), &v.program, Some(v.cost))));

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
    for d in &chosen {
        crate::backend::check_precision(opts.precision, Some(d))?;
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
        precision: opts.precision,
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
        precision: opts.precision,
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
        // rank a whole family last (in an H200 suite run of 2026-11-24, `bench/results/HISTORY.md`,
        // it came out at -1.22 per kernel and seeded none of sum's one-launch grid reductions, 0.100 ms in the
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
            // the cache records f32 timings: a tf32 sweep neither reads nor writes them
            let recorded = record
                .lookup(&dev.name, &key)
                .filter(|_| opts.precision == ir::Precision::F32);
            if let Some((ms, check)) = recorded {
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
                        .get_or_init(|| bounded_eval_at(cands[0].2, &inputs.inputs, check_steps, opts.precision))
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
            if opts.precision == ir::Precision::F32 {
                record.store(&dev.name, &key, ms, &row.check);
            }
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
                                .get_or_init(|| {
                                    bounded_eval_at(cands[0].2, &inputs.inputs, check_steps, opts.precision)
                                })
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
                if opts.precision == ir::Precision::F32 {
                    record.store(&dev.name, &Record::config_key(source, &wg), ms, &rows[i].check);
                }
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
                            .get_or_init(|| bounded_eval_at(cands[0].2, &inputs.inputs, check_steps, opts.precision))
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

    report(src, &sizes, &cands, &ex, &chosen, &rows, &summaries, opts)
}

/// What a device's search did, for its report.
pub(crate) struct Summary {
    pub(crate) void: usize,
    pub(crate) out_of_time: usize,
    pub(crate) refined: usize,
    /// Leaders timed again with their sizes as kernel arguments.
    pub(crate) alternatives: usize,
    pub(crate) calibrated_order: bool,
    pub(crate) refit: Option<String>,
    pub(crate) order: Vec<usize>,
    pub(crate) elapsed: std::time::Duration,
}

pub(crate) fn timed_out(rows: &[Row], variant: usize, device: &str, limit: std::time::Duration) -> Error {
    let kept = rows.iter().filter(|r| r.median_ms.is_some()).count();
    Error::plain(format!(
        "variant {variant} did not finish on {device} within {} s ({TIME_LIMIT_VAR}); the {kept} result(s) \
         measured so far are in the tuning cache, and the next run resumes from them",
        limit.as_secs_f64()
    ))
}
