//! Running a compiled program on loaded inputs: on its device (a kernel plan, or a host
//! program's units) or on the reference interpreter; what `lift run` reads (`--data`, `--size`)
//! and how it compiles for the device it runs on.

use ir::{Diagnostic, Program};
use lift_compile::{compile, is_high_level, parse_sizes, report, Compiled, Error, Options};
use lift_data as data;
use std::collections::BTreeMap;
use typeck::TypeInfo;

pub struct RunOptions {
    pub device: Option<String>,
    pub time: bool,
    /// Run the reference interpreter instead of OpenCL.
    pub interp: bool,
}

pub struct RunResult {
    pub value: ir::interp::Value,
    pub ty: ir::Type,
    pub json: String,
    /// Per-kernel times, when asked for.
    pub timing: Option<String>,
}

impl RunResult {
    pub fn npy(&self) -> Result<Vec<u8>, String> {
        data::value_to_npy(&self.value, &self.ty).map_err(|e| report::render_plain(&e.message, &e.notes))
    }
}

/// Reads the `--data` arguments: `in.json` files and `param=file.npy` pairs.
pub fn read_sources(data: &[String]) -> Result<Vec<data::DataSource>, Error> {
    let mut out = vec![];
    for d in data {
        let read =
            |path: &str| std::fs::read(path).map_err(|e| Error::plain(format!("cannot read data file {path}: {e}")));
        match d.split_once('=') {
            Some((param, path)) if path.ends_with(".npy") => out.push(data::DataSource::Npy {
                param: param.to_string(),
                bytes: read(path)?,
                file: path.to_string(),
            }),
            _ => {
                let bytes = read(d)?;
                let text =
                    String::from_utf8(bytes).map_err(|_| Error::plain(format!("data file {d} is not UTF-8 text")))?;
                out.push(data::DataSource::Json(text, d.clone()));
            }
        }
    }
    Ok(out)
}

/// The run-time size conditions of a typed program (`split #2` of `N`: `N` even), checked
/// against the sizes of loaded inputs; the first that fails is the error, at its place.
pub fn verify_checks(info: &TypeInfo, inputs: &data::Inputs) -> Result<(), Error> {
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    for c in &info.checks {
        c.verify(&lookup)
            .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
    }
    Ok(())
}

/// `lift run`: load inputs, check sizes, run on the chosen backend.
pub fn run_files(src: &str, data: &[String], sizes: &[String], opts: &RunOptions) -> Result<RunResult, Error> {
    run_files_at(src, data, sizes, opts, ir::Precision::F32)
}

/// [`run_files`] at `--precision precision` ([`with_precision`]: `tf32` is refused on a device
/// without TF32 tensor cores). The interpreter computes every product in `f32`, which `tf32`
/// allows.
pub fn run_files_at(
    src: &str,
    data: &[String],
    sizes: &[String],
    opts: &RunOptions,
    precision: ir::Precision,
) -> Result<RunResult, Error> {
    let typed = compile(src, &Options::types_only())?;
    let sources = read_sources(data)?;
    let given = parse_sizes(sizes)?;
    let inputs = data::load(&typed.given, &sources, &given)?;
    // A variant may have dropped a primitive that the program's checks come from (`join ∘
    // split = id`), and its inputs are declared under them: they are the program's.
    verify_checks(&typed.given_info, &inputs)?;
    if opts.interp {
        return run_compiled(&typed, &inputs, opts);
    }
    // A high-level program runs as its tuned variant for these sizes and this device, else as
    // the cost model's best variant; every program is generated within the device's limits.
    // Without a device, running fails later with the reason.
    let device = host_runner::device_info(opts.device.as_deref()).ok();
    let copts = run_options(&typed.given, &inputs.sizes, device.as_ref());
    let copts = match (precision, &device) {
        // without a device the run fails later with the reason, as at `f32`
        (ir::Precision::Tf32, None) => copts,
        _ => with_precision(copts, precision, device.as_ref())?,
    };
    let compiled = compile(src, &copts)?;
    run_compiled(&compiled, &inputs, opts)
}

/// How `lift run` compiles `given` for `device` at `sizes`: a high-level program as its tuned
/// variant for the device when the tuning cache has one, every kernel within the device's
/// work-group limits, built for these sizes and for its compute capability (an NVIDIA
/// device's scans exchange through warp shuffles); without a device, none of these. Every
/// way of compiling for a device (`lift compile --device`, several devices, MPI ranks, `lift
/// build`) starts here, so that each gets the kernels `lift run` runs.
pub fn run_options(
    given: &Program,
    sizes: &BTreeMap<String, i64>,
    device: Option<&host_runner::DeviceInfo>,
) -> Options {
    Options {
        sizes: sizes.clone(),
        tuned_for: device.filter(|_| is_high_level(given)).map(|d| d.name.clone()),
        work_group_limit: device.map(work_group_limit),
        specialise: device.is_some(),
        compute_capability: device.and_then(|d| d.compute_capability),
        ..Options::default()
    }
}

/// `opts` for `--precision precision` on `device`: `tf32` is refused, naming the device, where
/// the device has no TF32 tensor cores (only NVIDIA GPUs of compute capability 8.0 or later
/// have them, `host_runner::DeviceInfo::tf32_tensor_cores`), rather than run as `f32` under
/// another name; otherwise the precision and the device's compute capability go to code
/// generation. `None` (no device known): only `f32`.
pub fn with_precision(
    opts: Options,
    precision: ir::Precision,
    device: Option<&host_runner::DeviceInfo>,
) -> Result<Options, Error> {
    check_precision(precision, device)?;
    Ok(Options {
        precision,
        compute_capability: device.and_then(|d| d.compute_capability),
        ..opts
    })
}

/// The refusal of [`with_precision`]: `tf32` on a device without TF32 tensor cores.
pub fn check_precision(precision: ir::Precision, device: Option<&host_runner::DeviceInfo>) -> Result<(), Error> {
    match (precision, device) {
        (ir::Precision::F32, _) => Ok(()),
        (ir::Precision::Tf32, Some(d)) if d.tf32_tensor_cores() => Ok(()),
        (ir::Precision::Tf32, Some(d)) => {
            let (major, minor) = host_runner::TF32_COMPUTE_CAPABILITY;
            let has = match d.compute_capability {
                Some((a, b)) => format!("an NVIDIA device of compute capability {a}.{b}"),
                None => "not an NVIDIA GPU (it does not report a compute capability)".to_string(),
            };
            Err(Error::plain(format!(
                "`--precision tf32` needs TF32 tensor cores, and device {} `{}` ({}) has none: it is {has}, \
                 and TF32 tensor cores are on NVIDIA GPUs of compute capability {major}.{minor} or later; \
                 on this device use `--precision f32` (the default)",
                d.id, d.name, d.platform
            )))
        }
        (ir::Precision::Tf32, None) => Err(Error::plain(
            "`--precision tf32` needs a device with TF32 tensor cores, and no OpenCL device was found",
        )),
    }
}

/// A device's work-group limits as code generation takes them: the queried
/// `CL_DEVICE_MAX_WORK_GROUP_SIZE` and `CL_DEVICE_MAX_WORK_ITEM_SIZES`, already lowered by
/// `LIFT_MAX_WORK_GROUP_SIZE` where it is set (`host_runner::MAX_WORK_GROUP_VAR`), so that the
/// kernels fit the device rather than being refused at launch, and its local memory.
pub fn work_group_limit(d: &host_runner::DeviceInfo) -> codegen_opencl::WorkGroupLimit {
    codegen_opencl::WorkGroupLimit::new(d.max_work_group_size, &d.max_work_item_sizes).with_local_mem(d.local_mem_bytes)
}

/// Runs a compiled program on loaded inputs: its kernels, or with `interp` (or without kernels)
/// the reference interpreter on the program as given.
pub fn run_compiled(c: &Compiled, inputs: &data::Inputs, opts: &RunOptions) -> Result<RunResult, Error> {
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    let plan = c.plan.as_ref().filter(|_| !opts.interp);
    let (prog, info) = match plan {
        Some(_) => (&c.program, &c.info),
        None => (&c.given, &c.given_info),
    };
    verify_checks(info, inputs)?;
    let host = c.host.as_ref().filter(|_| !opts.interp);
    let (value, timing) = match (plan, host) {
        (_, Some(h)) => crate::host::run_host(h, inputs, opts.device.as_deref(), opts.time)?,
        (Some(plan), None) => crate::plan::run(plan, inputs, opts.device.as_deref(), opts.time)?,
        (None, None) => {
            let v = ir::interp::eval(prog, &inputs.values, &lookup)
                .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
            (v, None)
        }
    };
    let json = value.to_json();
    Ok(RunResult {
        value,
        ty: info.result().clone(),
        json,
        timing,
    })
}

/// Equality with a relative tolerance for floats.
pub fn values_close(a: &ir::interp::Value, b: &ir::interp::Value, rel: f64) -> bool {
    use ir::interp::Value as V;
    let close =
        |x: f64, y: f64| x == y || (x - y).abs() <= rel * x.abs().max(y.abs()).max(1e-6) || (x.is_nan() && y.is_nan());
    match (a, b) {
        (V::Float(x), V::Float(y)) => close(f64::from(*x), f64::from(*y)),
        (V::Double(x), V::Double(y)) => close(*x, *y),
        (V::Int(x), V::Int(y)) => x == y,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Vector(xs), V::Vector(ys)) | (V::Tuple(xs), V::Tuple(ys)) | (V::Array(xs), V::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| values_close(x, y, rel))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(compute_capability: Option<(u32, u32)>) -> host_runner::DeviceInfo {
        host_runner::DeviceInfo {
            id: "1:0".into(),
            platform: "NVIDIA CUDA".into(),
            name: "NVIDIA H200".into(),
            kind: host_runner::DeviceKind::Gpu,
            version: "OpenCL 3.0 CUDA".into(),
            driver_version: "1.0".into(),
            max_alloc_bytes: 1 << 30,
            global_mem_bytes: 1 << 32,
            local_mem_bytes: 48 << 10,
            max_work_group_size: 1024,
            max_work_item_sizes: vec![1024, 1024, 64],
            compute_units: 132,
            compute_capability,
        }
    }

    /// `lift compile --device`, several devices and MPI ranks compile through `run_options`
    /// alone (no `--precision`); without the compute capability there, an NVIDIA device's scan
    /// was shown and run with the portable exchanges that `lift run` and `lift bench` (through
    /// `with_precision`) do not use.
    #[test]
    fn compiling_for_a_device_carries_its_compute_capability() {
        let prog = ir::parse("(lift (N) ((array-type float N)) (lambda (xs) (scan + 0.0f xs)))").expect("parses");
        let sizes = BTreeMap::from([("N".to_string(), 1 << 20)]);
        let nvidia = run_options(&prog, &sizes, Some(&device(Some((9, 0)))));
        assert_eq!(nvidia.compute_capability, Some((9, 0)));
        let other = run_options(&prog, &sizes, Some(&device(None)));
        assert_eq!(other.compute_capability, None);
        assert_eq!(run_options(&prog, &sizes, None).compute_capability, None);
        let f32_on_nvidia =
            with_precision(nvidia.clone(), ir::Precision::F32, Some(&device(Some((9, 0))))).expect("f32 everywhere");
        assert_eq!(f32_on_nvidia.compute_capability, nvidia.compute_capability);
    }
}
