//! `lift`: the compiler's library API in one place, re-exporting the crates that do the work,
//! and (package only) the `lift` binary, whose code is crate `lift_cli`.
//!
//! | concern | crate | here as |
//! |---|---|---|
//! | the compile pipeline, host programs, the tuning cache, errors | `lift_compile` | [`compile`], [`Options`], [`Compiled`], [`host`], [`cache`], [`Error`] |
//! | data files, random inputs, buffer layout | `lift_data` | [`data`], [`load`] |
//! | running plans and host programs on a device, or the interpreter | `lift_runtime` | [`backend`], [`run_files`], [`run_sources`] (inputs in memory), [`run_compiled`] |
//! | the OpenCL devices found | `host_runner` | [`opencl`] |
//! | several devices for one program | `lift_devices` | [`devices`] |
//! | `lift explore`, `lift tune`, `lift bench` | `lift_tune` | [`tune`], [`bench`] |
//! | `lift build`: a C library of a program | `lift_build` | [`library`] |
//! | a compiled program in an application: contexts, device arrays, calls | (here) | [`app`] |
//!
//! ```text
//! source ─ir::parse─▶ Program ─typeck::infer─▶ TypeInfo ─(high-level: the tuning cache or
//! rewrite::explore)─▶ variant ─validate::validate─▶ ─codegen_opencl::emit─▶ KernelPlan
//! ```
//!
//! Compiling and running a program from Rust (here on the reference interpreter, which needs no
//! OpenCL device; with `interp: false`, [`run_compiled`] runs the kernels of `plan`):
//!
//! ```
//! use ir::interp::Value;
//! let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x 2.0f)) xs)))";
//! let compiled = lift::compile(src, &lift::Options::default()).expect("compiles");
//! assert!(compiled.plan.as_ref().is_some_and(|p| p.source.contains("kernel void")));
//! let inputs = lift::data::Inputs {
//!     values: vec![Value::Array(vec![Value::Float(1.5), Value::Float(-2.0)])],
//!     sizes: [("N".to_string(), 2)].into_iter().collect(),
//! };
//! let opts = lift::RunOptions { device: None, time: false, interp: true };
//! let result = lift::run_compiled(&compiled, &inputs, &opts).expect("runs");
//! assert_eq!(result.json, "[3.0,-4.0]");
//! ```

//! Using a compiled program from an application ([`app`]): the program is built into a library
//! (`lift build`'s, loaded into the process), a context opens a device, arrays stay on the device
//! between calls, and each call's result can be the next call's input without a transfer. Sizes
//! other than those built for (here none) run the generic kernels; the context says which ran.
//!
//! ```
//! use lift::app::{BuildOptions, Library};
//! # fn main() -> Result<(), lift::Error> {
//! # // Needs an OpenCL device (PoCL in CI) and a C compiler, as `lift build` does.
//! # if lift::opencl::devices().map_or(true, |d| d.is_empty()) { return Ok(()); }
//! let src = "(lift (N) (float (array-type float N) (array-type float N))
//!              (lambda (a xs ys) (map (lambda (p) (+ (* a (get #0 p)) (get #1 p))) (zip xs ys))))";
//! let lib = Library::build("saxpy", src, &BuildOptions::default())?;
//! let ctx = lib.context(None)?; // or a device id, Some("0:0")
//! let xs = ctx.array(&[1.0f32, 2.0, 3.0], &[3])?;
//! let ys = ctx.array(&[0.5f32; 3], &[3])?;
//! let once = ctx.run(&[2.0f32.into(), (&xs).into(), (&ys).into()])?;
//! let twice = ctx.run(&[2.0f32.into(), (&xs).into(), (&once).into()])?; // `once` stays on the device
//! assert_eq!(twice.to_vec::<f32>()?, vec![4.5, 8.5, 12.5]);
//! assert!(ctx.used().contains("generic kernels"));
//! // Errors are values with the library's message, never a crash.
//! let short = ctx.array(&[1.0f32], &[1])?;
//! let e = ctx.run(&[2.0f32.into(), (&xs).into(), (&short).into()]).unwrap_err();
//! assert!(e.message().contains("argument `ys` has shape [1]"));
//! # Ok(())
//! # }
//! ```

pub mod app;

/// `lift build`: a program as a C library ([`library::build`]).
pub use lift_build as library;
pub use lift_compile::*;
pub use lift_data as data;
pub use lift_data::load;
pub use lift_devices as devices;
/// Running plans on a device (crate `lift_runtime`).
pub use lift_runtime as backend;
pub use lift_runtime::{
    read_sources, run_compiled, run_files, run_files_at, run_options, values_close, verify_checks, with_precision,
    work_group_limit, RunOptions, RunResult,
};
pub use lift_tune as tune;
pub use lift_tune::bench;

/// OpenCL devices as `lift devices` lists them ([`opencl::devices`], [`opencl::DeviceInfo`]).
pub mod opencl {
    pub use host_runner::{device_info, devices, DeviceInfo, DeviceKind};
}

/// `lift run` on inputs held in memory rather than in files: each source is a JSON object keyed
/// by parameter name or one parameter's `.npy` bytes (`DataSource::Npy`), `sizes` are what
/// `--size` gives. The program is compiled as `lift run` compiles it (its tuned variant for
/// these sizes and the device, else the cost model's), so an embedding gets the same kernels
/// and the same messages as the command line.
///
/// ```
/// use lift::data::DataSource;
/// let src = "(lift (N) ((array-type float N) float) (lambda (xs a) (map (lambda (x) (* x a)) xs)))";
/// let data = [DataSource::Json(r#"{"xs": [1, 2], "a": 0.5}"#.into(), "<inputs>".into())];
/// let opts = lift::RunOptions { device: None, time: false, interp: true };
/// let result = lift::run_sources(src, &data, &[], &opts).expect("runs");
/// assert_eq!(result.json, "[0.5,1.0]");
/// ```
pub fn run_sources(
    src: &str,
    sources: &[data::DataSource],
    sizes: &[(String, i64)],
    opts: &RunOptions,
) -> Result<RunResult, Error> {
    // The steps of `run_files` after its files are read, kept in the same order so that the
    // same input gives the same first error.
    let typed = compile(src, &Options::types_only())?;
    let inputs = data::load(&typed.given, sources, sizes)?;
    verify_checks(&typed.given_info, &inputs)?;
    if opts.interp {
        return run_compiled(&typed, &inputs, opts);
    }
    let device = host_runner::device_info(opts.device.as_deref()).ok();
    let compiled = compile(src, &run_options(&typed.given, &inputs.sizes, device.as_ref()))?;
    run_compiled(&compiled, &inputs, opts)
}
