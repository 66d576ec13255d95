//! The launch plan handed over by the compiler, and the checks that run before anything is
//! allocated on the device.

use crate::device::DeviceInfo;
use crate::error::Error;

/// A fully concrete description of one program run: every size is already a number.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// OpenCL C 1.2 source holding all kernels.
    pub source: String,
    /// Passed to `clBuildProgram`, e.g. `-cl-std=CL1.2`.
    pub build_options: String,
    pub buffers: Vec<BufferSpec>,
    /// Run in order on one in-order queue; nothing is read back between launches.
    pub launches: Vec<Launch>,
    /// What comes back once all launches have finished.
    pub reads: Vec<ReadSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    /// Only used in messages.
    pub name: String,
    pub bytes: usize,
    pub init: BufferInit,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BufferInit {
    /// Uploaded before the launches; must be exactly `bytes` long.
    Data(Vec<u8>),
    Zeroed,
    Uninit,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub kernel: String,
    pub args: Vec<KernelArg>,
    /// 1 to 3 dimensions. A zero entry means the launch has no work and is skipped.
    pub global: Vec<usize>,
    /// Same number of dimensions as `global`; `None` lets the driver choose.
    pub local: Option<Vec<usize>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    /// Index into `Plan::buffers`.
    Buffer(usize),
    /// Bytes of dynamically sized `__local` memory.
    Local(usize),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSpec {
    /// The whole buffer with this index.
    Whole(usize),
    /// The first `count` elements of buffer `data`, where `count` is the int32 at element
    /// `count_index` of buffer `count`. Filter results keep their length on the device.
    Counted {
        data: usize,
        count: usize,
        count_index: usize,
        elem_bytes: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Collect per-launch kernel times from profiling events.
    pub profile: bool,
    /// How many times the whole launch sequence runs (at least 1). Buffers with `Data` or
    /// `Zeroed` init are re-initialised before every repetition so that each one computes
    /// the same thing; with `profile`, each kernel's time is the median over repetitions.
    pub repeats: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            profile: false,
            repeats: 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// One entry per `Plan::reads`, in order.
    pub reads: Vec<Vec<u8>>,
    /// One entry per launch, in order, when profiling; empty otherwise. Skipped launches
    /// (a zero global size) report 0.
    pub kernel_times_ns: Vec<(String, u64)>,
    /// The program came from the in-memory or on-disk cache rather than a source build.
    pub build_cached: bool,
}

/// Size of an allocation for a buffer of `bytes` bytes: OpenCL rejects zero-sized buffers.
pub(crate) fn alloc_bytes(bytes: usize) -> usize {
    bytes.max(1)
}

fn buffer_name(plan: &Plan, index: usize) -> String {
    match plan.buffers.get(index) {
        Some(b) => format!("buffer {index} (`{}`)", b.name),
        None => format!("buffer {index}"),
    }
}

fn check_buffer_index(plan: &Plan, index: usize, context: &str) -> Result<(), Error> {
    if index < plan.buffers.len() {
        Ok(())
    } else {
        Err(Error::InvalidPlan(format!(
            "{context} refers to buffer {index}, but the plan has only {} buffers",
            plan.buffers.len()
        )))
    }
}

/// Everything that can be checked without touching the device: structure, memory limits and
/// NDRange shape. Kernel-specific limits (argument count, per-kernel work-group size) are
/// checked once the kernels exist.
pub(crate) fn check_plan(plan: &Plan, dev: &DeviceInfo, opts: &RunOptions) -> Result<(), Error> {
    if opts.repeats == 0 {
        return Err(Error::InvalidPlan("repeats must be at least 1".into()));
    }
    // The C API takes NUL-terminated strings; opencl3 would panic on an interior NUL.
    if plan.build_options.contains('\0') {
        return Err(Error::InvalidPlan("the build options contain a NUL byte".into()));
    }
    if plan.source.contains('\0') {
        return Err(Error::InvalidPlan("the OpenCL source contains a NUL byte".into()));
    }

    let mut total: u64 = 0;
    for (i, b) in plan.buffers.iter().enumerate() {
        if let BufferInit::Data(data) = &b.init {
            if data.len() != b.bytes {
                return Err(Error::InvalidPlan(format!(
                    "{} is {} bytes but its initial data has {} bytes",
                    buffer_name(plan, i),
                    b.bytes,
                    data.len()
                )));
            }
        }
        let bytes = alloc_bytes(b.bytes) as u64;
        if bytes > dev.max_alloc_bytes {
            return Err(Error::TooLarge {
                what: buffer_name(plan, i),
                bytes,
                limit: dev.max_alloc_bytes,
            });
        }
        total = total.saturating_add(bytes);
    }
    if total > dev.global_mem_bytes {
        return Err(Error::TooLarge {
            what: format!("the {} buffers together", plan.buffers.len()),
            bytes: total,
            limit: dev.global_mem_bytes,
        });
    }

    for (li, l) in plan.launches.iter().enumerate() {
        check_launch(plan, dev, li, l)?;
    }

    for (ri, r) in plan.reads.iter().enumerate() {
        match *r {
            ReadSpec::Whole(b) => check_buffer_index(plan, b, &format!("read {ri}"))?,
            ReadSpec::Counted {
                data,
                count,
                count_index,
                elem_bytes,
            } => {
                let ctx = format!("read {ri}");
                check_buffer_index(plan, data, &ctx)?;
                check_buffer_index(plan, count, &ctx)?;
                if elem_bytes == 0 {
                    return Err(Error::InvalidPlan(format!("{ctx} has an element size of 0 bytes")));
                }
                let end = count_index.checked_mul(4).and_then(|o| o.checked_add(4));
                if end.is_none_or(|end| end > plan.buffers[count].bytes) {
                    return Err(Error::InvalidPlan(format!(
                        "{ctx} takes its count from int32 element {count_index} of {}, which \
                         holds only {} bytes",
                        buffer_name(plan, count),
                        plan.buffers[count].bytes
                    )));
                }
            }
        }
    }
    Ok(())
}

fn check_launch(plan: &Plan, dev: &DeviceInfo, li: usize, l: &Launch) -> Result<(), Error> {
    let wg = |reason: String| Error::WorkGroup {
        launch: li,
        kernel: l.kernel.clone(),
        reason,
    };
    if l.kernel.contains('\0') {
        return Err(Error::InvalidPlan(format!(
            "launch {li}: the kernel name contains a NUL byte"
        )));
    }
    if l.global.is_empty() || l.global.len() > 3 {
        return Err(wg(format!(
            "it has {} dimensions; OpenCL allows 1 to 3",
            l.global.len()
        )));
    }
    let max_dims = dev.max_work_item_sizes.len();
    if max_dims > 0 && l.global.len() > max_dims {
        return Err(wg(format!(
            "it has {} dimensions but the device supports {max_dims}",
            l.global.len()
        )));
    }
    if let Some(local) = &l.local {
        if local.len() != l.global.len() {
            return Err(wg(format!(
                "the global size has {} dimensions but the local size has {}",
                l.global.len(),
                local.len()
            )));
        }
        if local.contains(&0) {
            return Err(wg(format!("the local size {local:?} contains a zero")));
        }
        let product = local.iter().try_fold(1usize, |acc, &x| acc.checked_mul(x));
        if product.is_none_or(|p| p > dev.max_work_group_size) {
            return Err(wg(format!(
                "the local size {local:?} has more work-items than the device maximum of {} \
                 per work-group",
                dev.max_work_group_size
            )));
        }
        for (d, (&lsz, &max)) in local.iter().zip(&dev.max_work_item_sizes).enumerate() {
            if lsz > max {
                return Err(wg(format!(
                    "the local size {lsz} in dimension {d} exceeds the device maximum of {max}"
                )));
            }
        }
        // OpenCL 1.2 (still what NVIDIA implements) has no non-uniform work-groups.
        for (d, (&g, &lsz)) in l.global.iter().zip(local).enumerate() {
            if !g.is_multiple_of(lsz) {
                return Err(wg(format!(
                    "the global size {g} in dimension {d} is not a multiple of the local size {lsz}"
                )));
            }
        }
    }

    // Static `local` arrays count against the same limit as the arguments; checked here
    // because some drivers (PoCL) abort the process at launch instead of failing the call.
    let statics = static_local_buffers(&plan.source, &l.kernel);
    let mut local_total: u64 = statics.iter().fold(0u64, |acc, b| acc.saturating_add(b.bytes));
    if let Some(big) = statics.iter().max_by_key(|b| b.bytes) {
        if local_total > dev.local_mem_bytes {
            let others = if statics.len() > 1 {
                format!(
                    " (with the kernel's {} other local arrays: {local_total} bytes)",
                    statics.len() - 1
                )
            } else {
                String::new()
            };
            return Err(Error::TooLarge {
                what: format!(
                    "the local buffer `{}` ({} x {}) of kernel `{}`{others}",
                    big.name, big.count, big.elem, l.kernel
                ),
                bytes: big.bytes.max(local_total),
                limit: dev.local_mem_bytes,
            });
        }
    }
    for (ai, a) in l.args.iter().enumerate() {
        match *a {
            KernelArg::Buffer(b) => check_buffer_index(plan, b, &format!("launch {li} argument {ai}"))?,
            KernelArg::Local(bytes) => local_total = local_total.saturating_add(bytes as u64),
            _ => {}
        }
    }
    if local_total > dev.local_mem_bytes {
        return Err(Error::TooLarge {
            what: format!("the local memory of launch {li} (kernel `{}`)", l.kernel),
            bytes: local_total,
            limit: dev.local_mem_bytes,
        });
    }
    Ok(())
}

/// A fixed-size `local` array declared in a kernel's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StaticLocal {
    pub name: String,
    pub elem: String,
    pub count: u64,
    pub bytes: u64,
}

/// The `local T name[n];` declarations of kernel `kernel` in OpenCL C `source`, for element
/// types of known size (built-in scalars and their vectors; others are left to the driver's
/// own check after the build).
pub(crate) fn static_local_buffers(source: &str, kernel: &str) -> Vec<StaticLocal> {
    let mut out = vec![];
    let mut inside = false;
    for line in source.lines() {
        if let Some(at) = line.find("kernel void ") {
            let rest = &line[at + "kernel void ".len()..];
            inside = rest.strip_prefix(kernel).is_some_and(|r| r.starts_with('('));
            continue;
        }
        if !inside {
            continue;
        }
        let t = line.trim();
        let Some(decl) = t.strip_prefix("local ").or_else(|| t.strip_prefix("__local ")) else {
            continue;
        };
        let Some(decl) = decl.strip_suffix("];") else { continue };
        let mut words = decl.split_whitespace();
        let (Some(elem), Some(rest), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let Some((name, count)) = rest.split_once('[') else {
            continue;
        };
        let (Ok(count), Some(size)) = (count.parse::<u64>(), c_type_bytes(elem)) else {
            continue;
        };
        out.push(StaticLocal {
            name: name.to_string(),
            elem: elem.to_string(),
            count,
            bytes: count.saturating_mul(size),
        });
    }
    out
}

/// Size of an OpenCL C built-in scalar or vector type (a 3-vector takes the room of 4).
fn c_type_bytes(ty: &str) -> Option<u64> {
    let digits = ty.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let base = &ty[..ty.len() - digits.len()];
    let scalar = match base {
        "char" | "uchar" | "bool" => 1,
        "short" | "ushort" | "half" => 2,
        "int" | "uint" | "float" => 4,
        "long" | "ulong" | "double" => 8,
        _ => return None,
    };
    let lanes = match digits {
        "" => 1,
        "2" => 2,
        "3" | "4" => 4,
        "8" => 8,
        "16" => 16,
        _ => return None,
    };
    Some(scalar * lanes)
}

/// Median of non-empty samples; the mean of the middle two for an even count.
pub(crate) fn median_u64(samples: &mut [u64]) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    samples.sort_unstable();
    let n = samples.len();
    if n % 2 == 1 {
        samples[n / 2]
    } else {
        let (a, b) = (samples[n / 2 - 1], samples[n / 2]);
        a / 2 + b / 2 + (a % 2 + b % 2) / 2
    }
}
