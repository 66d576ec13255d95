//! One measured configuration ([`Row`]) and the record of measurements kept in the tuning cache,
//! so that an interrupted run loses nothing.

use crate::check::*;
use crate::search::*;
use crate::*;
use std::collections::BTreeMap;

/// Each variant's measurement, recorded in the tuning cache as soon as it is taken, so that a
/// run that is interrupted (Ctrl-C, killed, a hung kernel, a lost device) loses nothing, and
/// the next run of the same program at the same sizes skips what is already measured on the
/// same device. Only results of variants that ran are kept: a failure may be the device's,
/// and is tried again.
pub(crate) struct Record {
    /// `measured|<program key>` without the device part.
    pub(crate) key: String,
    /// The cache as this run found it: a run resumes what earlier runs measured, not what
    /// another of its devices (the same device named twice) measured a moment ago.
    pub(crate) earlier: serde_json::Map<String, serde_json::Value>,
}

impl Record {
    pub(crate) fn new(src: &str, sizes: &BTreeMap<String, i64>) -> Record {
        Record {
            key: format!("measured|{:016x}|{}", fnv1a64(src.as_bytes()), sizes_text(sizes)),
            earlier: cache_path().map(|p| read_cache(&p)).unwrap_or_default(),
        }
    }

    pub(crate) fn slot(&self, device_name: &str) -> String {
        format!("{}|{device_name}", self.key)
    }

    /// A configuration's key: its variant's source and `mapGlb` work-group size (the default's
    /// key is the source's alone, as before work-group sizes were tuned).
    pub(crate) fn config_key(source: &str, work_group: &[usize]) -> String {
        let text = if work_group.is_empty() {
            source.to_string()
        } else {
            format!("{source}|work-group {}", work_group_text(work_group))
        };
        format!("{:016x}", fnv1a64(text.as_bytes()))
    }

    /// The recorded measurement of a configuration (by [`Record::config_key`]) on the device.
    pub(crate) fn lookup(&self, device_name: &str, key: &str) -> Option<(f64, Check)> {
        let entry = self.earlier.get(&self.slot(device_name))?.get(key)?;
        let ms = entry.get("median_ms")?.as_f64()?;
        Some((ms, check_from_json(entry.get("check")?)?))
    }

    pub(crate) fn store(&self, device_name: &str, key: &str, ms: f64, check: &Check) {
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

/// One measured configuration (variant and work-group size) on one device.
pub(crate) struct Row {
    /// When its measurement started and ended, in seconds from the start of the tune (both 0
    /// for a result resumed from the cache): the table shows the devices sweeping at once.
    pub(crate) started_s: f64,
    pub(crate) ended_s: f64,
    pub(crate) device: String,
    pub(crate) device_index: usize,
    pub(crate) variant: usize,
    /// `mapGlb` work-group size (empty: the default).
    pub(crate) work_group: Vec<usize>,
    /// The order in which the search tried it on its device, from 1.
    pub(crate) try_no: usize,
    /// How the search came to it.
    pub(crate) found_by: &'static str,
    pub(crate) median_ms: Option<f64>,
    pub(crate) check: Check,
    /// Why it did not run, when it did not.
    pub(crate) error: String,
    pub(crate) description: String,
    /// Taken from the tuning cache (an earlier run).
    pub(crate) resumed: bool,
    /// Seconds its measurement took in this run: compiling, building, copying, timing (not
    /// interpreting); what re-timing it will cost is estimated from it.
    pub(crate) secs: f64,
    /// Run once only, as it was already this many times the best so far.
    pub(crate) cut: Option<f64>,
    /// The sizes built into its kernels (`Options::specialise`); `false`: kernel arguments,
    /// timed for the leaders only (see [`ALTERNATIVES`]).
    pub(crate) built_in: bool,
}

impl Row {
    pub(crate) fn correct(&self) -> bool {
        matches!(self.check, Check::Ok { .. })
    }
    pub(crate) fn note(&self) -> String {
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
    pub(crate) fn deferred(&self) -> bool {
        matches!(&self.check, Check::Unchecked(why) if why.starts_with(DEFERRED))
    }
    /// Usable as the tuned best: it ran and is not known to be wrong.
    pub(crate) fn usable(&self) -> bool {
        self.median_ms.is_some() && !matches!(self.check, Check::Wrong(_) | Check::NotRun)
    }
    /// Checked rows first, then unchecked ones, each by time (sizes as kernel arguments
    /// handicapped by [`ARGUMENTS_MARGIN`]); then those that did not run.
    pub(crate) fn rank_key(&self) -> (u8, f64) {
        let ms = self.median_ms.unwrap_or(f64::INFINITY) * if self.built_in { 1.0 } else { 1.0 + ARGUMENTS_MARGIN };
        match self.check {
            Check::Ok { .. } => (0, ms),
            Check::Unchecked(_) => (1, ms),
            Check::Wrong(_) | Check::NotRun => (2, f64::INFINITY),
        }
    }
}
