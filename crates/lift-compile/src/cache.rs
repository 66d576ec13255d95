//! The tuning cache (`tuning.json` in the host runner's cache directory): `lift tune`'s best
//! configuration per program text, sizes and device, which [`crate::compile`] reads for
//! [`crate::Options::tuned_for`], and the measurements and calibrations `lift tune` and the
//! multi-device planner keep between runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bit: stable across Rust releases, so cache keys survive rebuilds.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub fn sizes_text(sizes: &BTreeMap<String, i64>) -> String {
    sizes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn cache_key(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str) -> String {
    format!("{:016x}|{}|{device_name}", fnv1a64(src.as_bytes()), sizes_text(sizes))
}

/// The device part of the tuning cache's key for runs at `precision`: the device's name for
/// `f32`, and `name|tf32` for `tf32`, whose variants (tensor-core tiles) are timed and kept
/// apart from the f32 ones.
pub fn precision_key(device_name: &str, precision: ir::Precision) -> String {
    match precision {
        ir::Precision::F32 => device_name.to_string(),
        ir::Precision::Tf32 => format!("{device_name}|tf32"),
    }
}

pub fn cache_path() -> Option<PathBuf> {
    host_runner::default_cache_dir().map(|d| d.join("tuning.json"))
}

pub fn read_cache(path: &Path) -> serde_json::Map<String, serde_json::Value> {
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
    let sizes: BTreeMap<String, i64> = crate::parse_sizes(sizes).ok()?.into_iter().collect();
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

pub fn store_best(src: &str, sizes: &BTreeMap<String, i64>, device_name: &str, entry: serde_json::Value) {
    update_cache(|cache| {
        cache.insert(cache_key(src, sizes, device_name), entry);
    });
}

/// Read-modify-write of the tuning cache. The new file is written next to the old one and
/// renamed over it, so a reader, or a run killed half-way through the write, never sees half
/// a file. Failures are ignored: the cache only saves time.
pub fn update_cache(change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
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
/// `128` or `16×16`; `default` when empty.
pub fn work_group_text(wg: &[usize]) -> String {
    if wg.is_empty() {
        "default".into()
    } else {
        wg.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("×")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_variants_are_kept_apart_from_the_f32_ones() {
        let sizes: BTreeMap<String, i64> = [("N".to_string(), 4096)].into_iter().collect();
        let key = |p| cache_key("(lift)", &sizes, &precision_key("NVIDIA H200", p));
        // f32's key is the one entries have always had
        assert_eq!(key(ir::Precision::F32), cache_key("(lift)", &sizes, "NVIDIA H200"));
        assert_ne!(key(ir::Precision::Tf32), key(ir::Precision::F32));
    }
}
