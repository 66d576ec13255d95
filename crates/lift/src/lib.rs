//! The `lift` driver: the one place the compiler's stages are chained ([`compile`]), and the
//! CLI's commands on top of it. No compiler logic lives here beyond ordering the passes and
//! converting data.
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

pub use lift_compile::*;
pub use lift_data as data;
pub use lift_devices as devices;
/// Running plans on a device: the runtime crate, under the name the code has always used.
pub use lift_runtime as backend;
pub use lift_runtime::{
    read_sources, run_compiled, run_files, run_options, values_close, verify_checks, work_group_limit, RunOptions,
    RunResult,
};
pub use lift_tune as tune;
pub use lift_tune::bench;
