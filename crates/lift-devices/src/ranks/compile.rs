//! A slice program compiled once per kind of device: where every rank's device has rank 0's
//! name, rank 0 alone chooses the variant (a high-level program's exploration, the tuning
//! cache) and sends it; the others compile that variant as written with the options rank 0
//! compiled with, which makes the same kernels without exploring again.

use super::transport::Comm;
use lift_compile::{Error, Options};
use std::collections::BTreeMap;

/// Whether every rank's device has rank 0's name (the same kind of device, so the same
/// variant and slices).
pub(super) fn same_devices(comm: &Comm) -> bool {
    let names: Vec<&str> = comm
        .devices
        .iter()
        .map(|d| d.split_once(", ").map_or(d.as_str(), |x| x.1))
        .collect();
    names.iter().all(|d| *d == names[0])
}

/// Rank 0's compiled slice program (`mine` there) on every rank with a slice (`has_slice`;
/// `None` on the others): rank 0 sends
/// the variant it chose (its source, work-group size and whether sizes are built in), and the
/// others compile it as written with the options rank 0 compiled with, which makes the same
/// kernels without exploring again. A failure of rank 0's is theirs too.
pub(super) fn share_variant(
    comm: &Comm,
    mine: Option<Result<lift_compile::Compiled, Error>>,
    src: &str,
    sizes: &BTreeMap<String, i64>,
    device: &str,
    vary: Option<&str>,
    has_slice: bool,
) -> Result<Option<Result<lift_compile::Compiled, Error>>, Error> {
    let sent = comm.is_root().then(|| {
        let v = match &mine {
            Some(Ok(c)) => match &c.variant {
                Some(v) => {
                    serde_json::json!({ "source": v.source, "work_group": v.work_group, "built_in": v.built_in })
                }
                None => serde_json::json!({ "as_written": true }),
            },
            Some(Err(e)) => serde_json::json!({ "error": e.message() }),
            None => serde_json::json!({ "error": "internal: rank 0 has no slice to compile" }),
        };
        v.to_string().into_bytes()
    });
    let got = comm.broadcast(sent)?;
    if comm.is_root() {
        return Ok(mine);
    }
    if !has_slice {
        return Ok(None);
    }
    let v: serde_json::Value =
        serde_json::from_slice(&got).map_err(|_| Error::plain("internal: a malformed variant from rank 0"))?;
    let compiled = (|| {
        if v.get("error").is_some() {
            return Err(Error::plain("no variant: rank 0 could not compile the slice"));
        }
        let typed = lift_compile::compile(src, &Options::types_only())?;
        let info = host_runner::device_info(Some(device)).map_err(|e| Error::plain(e.to_string()))?;
        let mut opts = lift_runtime::run_options(&typed.given, sizes, Some(&info));
        opts.vary.extend(vary.map(str::to_string));
        opts.as_written = true;
        let Some(source) = v.get("source").and_then(|x| x.as_str()) else {
            return lift_compile::compile(src, &opts);
        };
        opts.work_group = v
            .get("work_group")
            .and_then(|x| x.as_array())
            .map(|xs| xs.iter().filter_map(|x| x.as_u64().map(|n| n as usize)).collect())
            .unwrap_or_default();
        opts.specialise &= v.get("built_in").and_then(|x| x.as_bool()).unwrap_or(true);
        lift_compile::compile(source, &opts)
    })();
    Ok(Some(compiled))
}
