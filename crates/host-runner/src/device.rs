//! Device discovery, the `lift devices` table, and device selection.

use std::fmt;
use std::sync::Mutex;

use opencl3::device::{Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_id;

use crate::error::{cl, human_bytes, Error};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Gpu,
    Cpu,
    Accelerator,
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Accelerator => "Accelerator",
            DeviceKind::Other => "Other",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `P:D`: platform index and device index within that platform, e.g. `0:0`.
    pub id: String,
    pub platform: String,
    pub name: String,
    pub kind: DeviceKind,
    /// `CL_DEVICE_VERSION`, e.g. `OpenCL 3.0 CUDA`.
    pub version: String,
    /// `CL_DRIVER_VERSION`; part of the program-cache key since binaries depend on it.
    pub driver_version: String,
    pub max_alloc_bytes: u64,
    pub global_mem_bytes: u64,
    pub local_mem_bytes: u64,
    pub max_work_group_size: usize,
    /// Per-dimension limit on the local size (`CL_DEVICE_MAX_WORK_ITEM_SIZES`).
    pub max_work_item_sizes: Vec<usize>,
    pub compute_units: u32,
    /// NVIDIA's compute capability (major, minor), from `cl_nv_device_attribute_query`;
    /// `None` on devices without that extension (every other vendor, PoCL).
    pub compute_capability: Option<(u32, u32)>,
}

/// The first compute capability whose tensor cores multiply TF32 (`mma.sync` m16n8k8 `.tf32`,
/// PTX ISA 7.0): Ampere, 8.0.
pub const TF32_COMPUTE_CAPABILITY: (u32, u32) = (8, 0);

impl DeviceInfo {
    /// Whether the device has tensor cores that multiply TF32 operands: an NVIDIA device of
    /// compute capability [`TF32_COMPUTE_CAPABILITY`] or later.
    pub fn tf32_tensor_cores(&self) -> bool {
        self.compute_capability.is_some_and(|cc| cc >= TF32_COMPUTE_CAPABILITY)
    }
}

/// A device as found on the machine: its description plus the handle to open it.
pub(crate) struct Found {
    pub info: DeviceInfo,
    pub id: cl_device_id,
    /// `CL_PLATFORM_VERSION`; only needed for the cache key.
    pub platform_version: String,
}

/// Lists every device of every platform, in platform order then device order.
///
/// An empty list is not an error here: platforms can exist without devices.
pub fn devices() -> Result<Vec<DeviceInfo>, Error> {
    Ok(enumerate()?.into_iter().map(|f| f.info).collect())
}

/// PoCL 3.1 initialises its devices lazily inside the first `clGetDeviceIDs` and crashes
/// when another thread queries a device meanwhile (seen with parallel tests), so discovery
/// is serialised process-wide. It runs once per `Session::open`, so the lock costs nothing.
static DISCOVERY: Mutex<()> = Mutex::new(());

pub(crate) fn enumerate() -> Result<Vec<Found>, Error> {
    // A panic elsewhere while holding the lock leaves nothing inconsistent: ignore poison.
    let _guard = DISCOVERY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let platforms = get_platforms().map_err(|e| {
        Error::NoPlatform(format!(
            "{}; is an OpenCL driver (ICD) installed?",
            opencl3::error_codes::error_text(e.0)
        ))
    })?;
    if platforms.is_empty() {
        return Err(Error::NoPlatform("the OpenCL loader lists no platform".into()));
    }
    let mut out = Vec::new();
    for (pi, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().map_err(cl("clGetPlatformInfo"))?;
        let platform_version = platform.version().unwrap_or_default();
        // A platform without devices answers CL_DEVICE_NOT_FOUND; that is not our failure.
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        for (di, &id) in ids.iter().enumerate() {
            let info = describe(format!("{pi}:{di}"), &platform_name, id)?;
            out.push(Found {
                info,
                id,
                platform_version: platform_version.clone(),
            });
        }
    }
    Ok(out)
}

fn describe(id: String, platform: &str, handle: cl_device_id) -> Result<DeviceInfo, Error> {
    let d = Device::new(handle);
    let q = cl("clGetDeviceInfo");
    let ty = d.dev_type().map_err(&q)?;
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceKind::Accelerator
    } else {
        DeviceKind::Other
    };
    Ok(DeviceInfo {
        id,
        platform: platform.trim().to_string(),
        name: d.name().map_err(&q)?.trim().to_string(),
        kind,
        version: d.version().map_err(&q)?.trim().to_string(),
        driver_version: d.driver_version().map_err(&q)?.trim().to_string(),
        max_alloc_bytes: d.max_mem_alloc_size().map_err(&q)?,
        global_mem_bytes: d.global_mem_size().map_err(&q)?,
        local_mem_bytes: lowered(d.local_mem_size().map_err(&q)?, LOCAL_MEM_VAR),
        max_work_group_size: lowered(d.max_work_group_size().map_err(&q)?, MAX_WORK_GROUP_VAR),
        max_work_item_sizes: d
            .max_work_item_sizes()
            .map_err(&q)?
            .into_iter()
            .map(|m| lowered(m, MAX_WORK_GROUP_VAR))
            .collect(),
        compute_units: d.max_compute_units().map_err(&q)?,
        compute_capability: compute_capability(&d),
    })
}

/// The device's NVIDIA compute capability where it lists `cl_nv_device_attribute_query`;
/// `None` where it does not, or does not answer (no capability rather than an error: a
/// device without it is simply not one that tensor-core code is generated for).
fn compute_capability(d: &Device) -> Option<(u32, u32)> {
    let extensions = d.extensions().ok()?;
    if !extensions
        .split_whitespace()
        .any(|e| e == "cl_nv_device_attribute_query")
    {
        return None;
    }
    // `CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV` is 0x4000, `_MINOR_NV` 0x4001; `cl3` reads both
    // as a `cl_uint` (its `InfoType::Uint`, which `u32::from` takes)
    let query = |param| -> Option<u32> { opencl3::device::get_device_info(d.id(), param).ok().map(u32::from) };
    Some((
        query(opencl3::device::CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV)?,
        query(opencl3::device::CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV)?,
    ))
}

/// Environment variables that make every device report a smaller limit than it has: the
/// checks before launch then treat it as a smaller device would be treated, so their clean
/// errors can be tested on a CPU driver whose own limits are generous (PoCL allows 4096
/// work-items per group). They only ever lower a limit; a value that is no number is ignored.
pub const MAX_WORK_GROUP_VAR: &str = "LIFT_MAX_WORK_GROUP_SIZE";
pub const LOCAL_MEM_VAR: &str = "LIFT_LOCAL_MEM_BYTES";

/// `1` (or `0`): build every program with `LIFT_GPU` defined so, whatever the device is; the
/// code paths generated for GPUs (the filter's vector loads and prefetch) are then tested on a
/// CPU driver and under Oclgrind. Anything else is ignored.
pub const GPU_PATHS_VAR: &str = "LIFT_GPU_PATHS";

/// The value of `LIFT_GPU` for programs built for a device of kind `kind`.
pub(crate) fn gpu_paths(kind: DeviceKind) -> u8 {
    match std::env::var(GPU_PATHS_VAR).ok().as_deref().map(str::trim) {
        Some("1") => 1,
        Some("0") => 0,
        _ => u8::from(matches!(kind, DeviceKind::Gpu)),
    }
}

/// The value of `LIFT_GPU_DEVICE` for a program built for `info`: 1 on a GPU whose work-groups
/// really run at once. Oclgrind calls its simulator a GPU, but it checks what OpenCL 1.2
/// promises, under which the filter's volatile reads of status words that other groups write
/// with atomics are data races: there the kernels read them with atomics.
pub(crate) fn gpu_device(info: &DeviceInfo) -> u8 {
    u8::from(matches!(info.kind, DeviceKind::Gpu) && !info.platform.contains("Oclgrind"))
}

fn lowered<T: Copy + Ord + std::str::FromStr>(queried: T, var: &str) -> T {
    let forced = std::env::var(var).ok().and_then(|v| v.trim().parse::<T>().ok());
    forced.map_or(queried, |f| f.min(queried))
}

/// The description of the device `Session::open(wanted)` would open, without opening it: what
/// the compiler needs to know of its target before generating code (its work-group limits).
pub fn device_info(wanted: Option<&str>) -> Result<DeviceInfo, Error> {
    let mut found = enumerate()?;
    let index = select(&found, wanted)?;
    Ok(found.swap_remove(index).info)
}

/// Picks the device for `Session::open`.
///
/// `None` (or an empty string) prefers the first GPU, then the first device of any kind.
/// `Some("P:D")` must name an existing id exactly; anything else is a case-insensitive
/// substring of the device name or platform name, first match wins.
pub(crate) fn select(found: &[Found], wanted: Option<&str>) -> Result<usize, Error> {
    if found.is_empty() {
        return Err(Error::NoDevice("the OpenCL platforms list no device".into()));
    }
    let wanted = wanted.map(str::trim).filter(|w| !w.is_empty());
    let Some(wanted) = wanted else {
        let gpu = found.iter().position(|f| f.info.kind == DeviceKind::Gpu);
        return Ok(gpu.unwrap_or(0));
    };
    let unknown = || Error::UnknownDevice {
        wanted: wanted.to_string(),
        available: found.iter().map(|f| f.info.id.clone()).collect(),
    };
    if is_id(wanted) {
        return found.iter().position(|f| f.info.id == wanted).ok_or_else(unknown);
    }
    let needle = wanted.to_lowercase();
    found
        .iter()
        .position(|f| f.info.name.to_lowercase().contains(&needle) || f.info.platform.to_lowercase().contains(&needle))
        .ok_or_else(unknown)
}

fn is_id(s: &str) -> bool {
    match s.split_once(':') {
        Some((p, d)) => {
            !p.is_empty()
                && !d.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && d.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// The table printed by `lift devices`. Columns are padded to their widest cell, so the
/// layout depends only on the input.
pub fn describe_devices(devs: &[DeviceInfo]) -> String {
    if devs.is_empty() {
        return "no OpenCL devices found\n".to_string();
    }
    let header = [
        "ID",
        "TYPE",
        "NAME",
        "PLATFORM",
        "VERSION",
        "GLOBAL MEM",
        "MAX ALLOC",
        "LOCAL MEM",
        "MAX WG",
        "CUs",
    ];
    // Numbers read best right-aligned; text left-aligned.
    let right = [false, false, false, false, false, true, true, true, true, true];
    let rows: Vec<[String; 10]> = devs
        .iter()
        .map(|d| {
            [
                d.id.clone(),
                d.kind.to_string(),
                d.name.clone(),
                d.platform.clone(),
                d.version.clone(),
                human_bytes(d.global_mem_bytes),
                human_bytes(d.max_alloc_bytes),
                human_bytes(d.local_mem_bytes),
                d.max_work_group_size.to_string(),
                d.compute_units.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if right[i] {
                s.push_str(&pad);
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&pad);
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&header);
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        line(&cells);
    }
    out
}
