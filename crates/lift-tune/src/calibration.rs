//! The cost model's calibration against measured times: features of each configuration, a
//! ridge regression fitted per device, and the order it gives the next search.

use crate::*;
use std::collections::BTreeMap;

/// The cost model's features of a configuration for its calibration: the model's estimate, the
/// work-group size and the number of kernels (launches), all known before timing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Features([f64; 3]);

impl Features {
    pub(crate) fn of(cost: f64, work_group: &[usize], kernels: usize) -> Features {
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
pub(crate) struct Calibration {
    pub(crate) coef: [f64; 3],
    pub(crate) points: usize,
    pub(crate) programs: usize,
}

/// Timings kept per device for the calibration (the newest).
pub(crate) const CALIBRATION_POINTS: usize = 2000;

impl Calibration {
    pub(crate) fn key(device: &str) -> String {
        format!("calibration|{device}")
    }

    pub(crate) fn load(device: &str) -> Option<Calibration> {
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
    pub(crate) fn usable(&self) -> bool {
        self.points >= 12 && self.programs >= 2
    }

    pub(crate) fn predict(&self, f: &Features) -> f64 {
        self.coef.iter().zip(f.0).map(|(c, x)| c * x).sum()
    }

    /// Adds this run's points (replacing the program's earlier ones), refits and stores the
    /// calibration; its description for the report, `None` when nothing could be fitted.
    pub(crate) fn refit(device: &str, program: &str, points: &[(Features, f64)]) -> Option<String> {
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
pub(crate) const RIDGE: f64 = 1.0;
pub(crate) const PRIOR: [f64; 3] = [1.0, 0.0, 0.0];

/// Least squares of y on the features, each program's points centred on their means (its own
/// constant), with a ridge towards [`PRIOR`]. The coefficients and the number of programs;
/// `None` with fewer than 4 points.
// (index loops read as the matrix algebra they are)
#[allow(clippy::needless_range_loop)]
pub(crate) fn fit(points: &[(String, [f64; 3], f64)]) -> Option<([f64; 3], usize)> {
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
