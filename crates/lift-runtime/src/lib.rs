//! The runtime: executes what `lift_compile` produced on an OpenCL device through
//! `host_runner` — a kernel plan ([`plan`]), a host program's units and steps ([`host`]), or a
//! program kept resident across many runs ([`resident`]) — and [`run`]'s entry points that load
//! inputs, compile for the device at hand and run there or on the reference interpreter.

pub mod host;
mod launch;
pub mod plan;
pub mod resident;
pub mod run;

pub use host::{run_host, run_host_measured, HostMeasure};
pub use plan::{from_parts, run, run_measured, run_measured_with, Measured, Prepared};
pub use resident::{decode_as, elem_of, ParamData, Resident, ResidentTimes};
pub use run::{
    check_precision, read_sources, run_compiled, run_files, run_files_at, run_options, values_close, verify_checks,
    with_precision, work_group_limit, RunOptions, RunResult,
};
