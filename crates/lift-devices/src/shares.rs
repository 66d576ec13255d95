//! Each device's share of the split range: estimates of its speed (the tuning cache's times,
//! cached calibrations, or probes on random inputs) and the choice of devices worth their fixed
//! costs.

use crate::run::*;
use crate::*;
use lift_compile::Error;
use lift_data::Inputs;
use std::collections::BTreeMap;

/// A device's share of the split range is left out below this fraction of it: a sliver costs
/// its device's fixed costs (build, copies, launch) for next to nothing.
pub const MIN_SHARE: f64 = 0.02;

/// A device whose kernels take less than this for the whole range keeps it: any other device
/// needs about as long to open its context and build its kernels (PoCL: 0.1–1 s), so it could
/// not end sooner.
pub const MIN_GAIN_MS: f64 = 50.0;

/// Below this kernel time a calibration probe is mostly launch overhead: the probe grows (4×)
/// until its kernels take this long or it reaches 1/8 of the range.
pub(crate) const PROBE_MS: f64 = 2.0;

/// What one device is expected to take: `fixed_ms` whatever its share (building its kernels,
/// copying the inputs it reads whole, launching) plus `ns_per_elem` per element of its share.
#[derive(Clone, Debug)]
pub struct Estimate {
    pub ns_per_elem: f64,
    pub fixed_ms: f64,
    /// Where it comes from: the tuning cache, the calibration cache, or a probe just run.
    pub from: String,
    /// Whether the time per element is measured on kernels long enough to trust (else it is
    /// the first, small probe's: an overestimate of a fast device, mostly launch overhead).
    pub settled: bool,
}

impl Estimate {
    pub(crate) fn ms(&self, elems: f64) -> f64 {
        self.fixed_ms + elems * self.ns_per_elem / 1e6
    }
}

/// How the split range is shared: elements per device (0: nothing) and, per device, why.
#[derive(Clone, Debug)]
pub struct Shares {
    pub weights: Vec<f64>,
    pub why: Vec<String>,
}

/// The shares of `n` elements over `devices`: equal when every device is named the same;
/// otherwise from each device's [`Estimate`] (the tuning cache's time for the given program
/// `given_src` at these sizes, else a calibration cached per device and program, else a probe
/// at a small size, then cached), the devices that finish soonest together: the fastest alone,
/// then each next one while adding it makes the whole end sooner and its share is at least
/// [`MIN_SHARE`]. Shares make the chosen devices end together (`fixed + share × per-element`
/// equal).
pub fn shares(
    given_src: Option<&str>,
    split: &Split,
    inputs: &Inputs,
    devices: &[String],
    n: usize,
) -> Result<Shares, Error> {
    let mut distinct: Vec<&String> = vec![];
    for d in devices {
        if !distinct.contains(&d) {
            distinct.push(d);
        }
    }
    if distinct.len() < 2 || n == 0 {
        return Ok(Shares {
            weights: vec![1.0; devices.len()],
            why: devices
                .iter()
                .map(|_| "an equal share: every device is the same".to_string())
                .collect(),
        });
    }
    // A GPU first: when its kernels for the whole range take less than any other device
    // needs just to build its own (`MIN_GAIN_MS`), no other device can end sooner, and it is
    // not probed at all (mri-q on the H200 beside PoCL: a 1.2 ms kernel, and PoCL's probe,
    // building and opening cost the run 0.4–1.8 s for a device that then got nothing).
    // (every device is looked up, so that one that does not exist is an error even when it
    // would get nothing)
    let mut gpus = vec![];
    for (i, d) in devices.iter().enumerate() {
        let info = host_runner::device_info(Some(d)).map_err(|e| on_device(i, d, Error::plain(e.to_string())))?;
        if info.kind == host_runner::DeviceKind::Gpu {
            gpus.push(d);
        }
    }
    distinct.sort_by_key(|d| !gpus.contains(d));
    let lead = distinct[0];
    let li = devices.iter().position(|d| d == lead).expect("a named device");
    let first_est = estimate(given_src, split, inputs, lead, n, false).map_err(|e| on_device(li, lead, e))?;
    let lead_kernel_ms = n as f64 * first_est.ns_per_elem / 1e6;
    if lead_kernel_ms < MIN_GAIN_MS {
        let mut weights = vec![0.0; devices.len()];
        weights[li] = n as f64;
        let why = devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if i == li {
                    format!(
                        "100.0% of the range: ends at {:.1} ms ({:.3} ns per element, {:.1} ms fixed; {})",
                        first_est.ms(n as f64),
                        first_est.ns_per_elem,
                        first_est.fixed_ms,
                        first_est.from
                    )
                } else if d == lead {
                    "nothing: the range goes to the first slice of this device".to_string()
                } else {
                    format!(
                        "nothing, not probed: device {li} ({lead}) takes about {lead_kernel_ms:.1} ms for the whole \
                         range, less than another device needs to build its kernels ({MIN_GAIN_MS:.0} ms)"
                    )
                }
            })
            .collect();
        return Ok(Shares { weights, why });
    }
    // Then one small probe per device: a device that gets nothing even against the fast
    // device's overestimated time per element would get nothing against its true one, and a
    // device that gets everything needs no more precise time. Only devices that share the
    // range are probed further.
    let mut known: BTreeMap<&String, Estimate> = BTreeMap::new();
    known.insert(lead, first_est);
    for (i, d) in devices.iter().enumerate() {
        if !known.contains_key(d) {
            let e = estimate(given_src, split, inputs, d, n, false).map_err(|e| on_device(i, d, e))?;
            known.insert(d, e);
        }
    }
    let est: Vec<Estimate> = devices.iter().map(|d| known[d].clone()).collect();
    let first = choose(n, &est);
    if first.weights.iter().filter(|w| **w > 0.0).count() < 2 {
        return Ok(first);
    }
    let mut settled_any = false;
    for (i, d) in devices.iter().enumerate() {
        if first.weights[i] > 0.0 && !known[d].settled {
            let e = estimate(given_src, split, inputs, d, n, true).map_err(|e| on_device(i, d, e))?;
            known.insert(d, e);
            settled_any = true;
        }
    }
    if !settled_any {
        return Ok(first);
    }
    let est: Vec<Estimate> = devices.iter().map(|d| known[d].clone()).collect();
    Ok(choose(n, &est))
}

/// The end time (ms) of `set` sharing `n` elements so that all end together, and the shares;
/// a share may come out below zero (the device's fixed cost alone ends past the others).
pub(crate) fn together(n: f64, est: &[Estimate], set: &[usize]) -> (f64, Vec<f64>) {
    // fixed_i + share_i × c_i = T for all i, Σ share_i = n
    let speed: f64 = set.iter().map(|&i| 1e6 / est[i].ns_per_elem.max(1e-9)).sum();
    let lead: f64 = set
        .iter()
        .map(|&i| est[i].fixed_ms * 1e6 / est[i].ns_per_elem.max(1e-9))
        .sum();
    let t = (n + lead) / speed;
    let shares = set
        .iter()
        .map(|&i| (t - est[i].fixed_ms) * 1e6 / est[i].ns_per_elem.max(1e-9))
        .collect();
    (t, shares)
}

/// [`shares`]' choice from the estimates.
pub fn choose(n: usize, est: &[Estimate]) -> Shares {
    let nf = n as f64;
    let mut order: Vec<usize> = (0..est.len()).collect();
    order.sort_by(|&a, &b| est[a].ms(nf).total_cmp(&est[b].ms(nf)).then(a.cmp(&b)));
    let mut set = vec![order[0]];
    let (mut best_t, mut best_shares) = (est[order[0]].ms(nf), vec![nf]);
    let mut why: Vec<String> = vec![String::new(); est.len()];
    for &i in &order[1..] {
        let mut with = set.clone();
        with.push(i);
        let (t, sh) = together(nf, est, &with);
        let mine = *sh.last().expect("one share per device");
        // (a positive share always ends the whole sooner; none is left when the device's
        // fixed cost alone ends after the faster devices would have finished without it)
        if mine <= 0.0 || t >= best_t {
            why[i] = format!(
                "nothing: it would finish later than the faster device(s) alone (its fixed cost alone is \
                 {:.1} ms; they end at {best_t:.1} ms without it)",
                est[i].fixed_ms
            );
        } else if mine < MIN_SHARE * nf {
            why[i] = format!(
                "nothing: its share would be {:.1}% (below {:.0}%)",
                100.0 * mine / nf,
                100.0 * MIN_SHARE
            );
        } else {
            set = with;
            best_t = t;
            best_shares = sh;
        }
    }
    let mut weights = vec![0.0; est.len()];
    for (&i, &sh) in set.iter().zip(&best_shares) {
        weights[i] = sh;
        why[i] = format!(
            "{:.1}% of the range: ends at {best_t:.1} ms ({:.3} ns per element, {:.1} ms fixed; {})",
            100.0 * sh / nf,
            est[i].ns_per_elem,
            est[i].fixed_ms,
            est[i].from
        );
    }
    for i in 0..est.len() {
        if weights[i] == 0.0 {
            why[i] = format!(
                "{} ({:.3} ns per element, {:.1} ms fixed; {})",
                why[i], est[i].ns_per_elem, est[i].fixed_ms, est[i].from
            );
        }
    }
    Shares { weights, why }
}

/// One device's [`Estimate`] for the slice program at these sizes; with `settle`, probes grow
/// until their kernels are long enough to trust (see [`PROBE_MS`]), else one small probe.
pub(crate) fn estimate(
    given_src: Option<&str>,
    split: &Split,
    inputs: &Inputs,
    device: &str,
    n: usize,
    settle: bool,
) -> Result<Estimate, Error> {
    // The name alone: opening a context here cost a device that then gets nothing (PoCL beside
    // a GPU) about 0.4 s of the run.
    let name = host_runner::device_info(Some(device))
        .map_err(|e| Error::plain(e.to_string()))?
        .name;
    if let Some(ms) = given_src.and_then(|src| lift_compile::cache::tuned_ms(src, &inputs.sizes, &name)) {
        return Ok(Estimate {
            ns_per_elem: ms * 1e6 / n as f64,
            fixed_ms: 0.0,
            from: "the tuning cache's time of the whole program".into(),
            settled: true,
        });
    }
    // Per program and device; the sizes of the split dimension are left out, as the time per
    // element does not depend on them.
    let split_sizes = split.count.free_vars();
    let sizes: BTreeMap<String, i64> = inputs
        .sizes
        .iter()
        .filter(|(k, _)| !split_sizes.contains(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let key = format!(
        "devices|{}|{name}",
        lift_compile::cache::program_key(&split.slice_src, &sizes)
    );
    if let Some(v) = lift_compile::cache::cached(&key) {
        let settled = v.get("settled").and_then(|x| x.as_bool()).unwrap_or(false);
        if let (Some(ns), Some(fixed), true) = (
            v.get("ns_per_elem").and_then(|x| x.as_f64()),
            v.get("fixed_ms").and_then(|x| x.as_f64()),
            settled || !settle,
        ) {
            return Ok(Estimate {
                ns_per_elem: ns,
                fixed_ms: fixed,
                from: "calibrated before (tuning cache)".into(),
                settled,
            });
        }
    }
    let mut c = (n / 1024).clamp(1, n);
    let mut fixed_ms = None;
    let (ns_per_elem, probed, settled) = loop {
        let probe = slice_inputs(split, inputs, 0..c)?;
        let started = std::time::Instant::now();
        let compiled = compile_for(&split.slice_src, &probe, device, None)?;
        let plan = compiled
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a slice program without kernels"))?;
        const REPEATS: usize = 3;
        let m = lift_runtime::run_measured(plan, &probe, Some(device), true, REPEATS, false)?;
        let kernel_ms = m.kernel_ns.iter().map(|(_, ns)| *ns).sum::<u64>() as f64 / 1e6;
        // The first probe's wall time less its kernels: building, copying, launching.
        fixed_ms.get_or_insert((started.elapsed().as_secs_f64() * 1e3 - REPEATS as f64 * kernel_ms).max(0.0));
        let settled = kernel_ms >= PROBE_MS || c >= n / 8 || c >= n;
        if settled || !settle {
            break (kernel_ms * 1e6 / c as f64, c, settled);
        }
        c = (c * 4).min(n);
    };
    let fixed_ms = fixed_ms.unwrap_or(0.0);
    lift_compile::cache::store_cached(
        &key,
        serde_json::json!({ "ns_per_elem": ns_per_elem, "fixed_ms": fixed_ms, "probe": probed, "settled": settled }),
    );
    Ok(Estimate {
        ns_per_elem,
        fixed_ms,
        from: format!("a probe of {probed} just now, cached"),
        settled,
    })
}
