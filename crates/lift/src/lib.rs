//! `lift`: the compiler's library API in one place, re-exporting the crates that do the work,
//! and (package only) the `lift` binary, whose code is crate `lift_cli`.
//!
//! | concern | crate | here as |
//! |---|---|---|
//! | the compile pipeline, host programs, the tuning cache, errors | `lift_compile` | [`compile`], [`Options`], [`Compiled`], [`host`], [`cache`], [`Error`] |
//! | data files, random inputs, buffer layout | `lift_data` | [`data`], [`load`] |
//! | running plans and host programs on a device, or the interpreter | `lift_runtime` | [`backend`], [`run_files`], [`run_compiled`] |
//! | several devices for one program | `lift_devices` | [`devices`] |
//! | `lift explore`, `lift tune`, `lift bench` | `lift_tune` | [`tune`], [`bench`] |
//! | `lift build`: a C library of a program | `lift_build` | [`library`] |
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

/// `lift build`: a program as a C library ([`library::build`]).
pub use lift_build as library;
pub use lift_compile::*;
pub use lift_data as data;
pub use lift_data::load;
pub use lift_devices as devices;
/// Running plans on a device (crate `lift_runtime`).
pub use lift_runtime as backend;
pub use lift_runtime::{
    read_sources, run_compiled, run_files, run_options, values_close, verify_checks, work_group_limit, RunOptions,
    RunResult,
};
pub use lift_tune as tune;
pub use lift_tune::bench;
