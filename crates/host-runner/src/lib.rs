//! The only crate of `lift` that talks to OpenCL.
//!
//! The compiler hands over a [`Plan`] in which every size is already a number; this crate
//! checks it against the device limits, builds the program (through an in-memory and an
//! on-disk binary cache), runs the launches on one in-order profiling queue and reads the
//! results back.
//!
//! Nothing here panics on a missing driver or a bad plan: every failure is an [`Error`]
//! whose `Display` is meant to be shown to the user as is. The OpenCL library is loaded at
//! run time (opencl3's `dynamic` feature), so the crate builds and its tests pass on
//! machines without OpenCL; the device tests skip themselves there.
//!
//! Only OpenCL 1.2 host calls are used, because NVIDIA's driver is the 1.2 API with a 3.0
//! version string, while PoCL is 3.x.

mod cache;
mod device;
mod error;
mod plan;
mod session;

pub use cache::default_cache_dir;
pub use device::{
    describe_devices, device_info, devices, DeviceInfo, DeviceKind, GPU_PATHS_VAR, LOCAL_MEM_VAR, MAX_WORK_GROUP_VAR,
    TF32_COMPUTE_CAPABILITY,
};
pub use error::Error;
pub use plan::{BufferInit, BufferSpec, KernelArg, Launch, Plan, ReadSpec, RunOptions, RunResult};
pub use session::{keep_sessions, LaunchEvent, PendingRead, Prepared, Resident, Session};

/// The variable that makes a missing OpenCL device a test failure (CI sets it).
pub const REQUIRE_OPENCL_VAR: &str = "LIFT_REQUIRE_OPENCL";

/// For tests that need a device and found none: with [`REQUIRE_OPENCL_VAR`] set (to anything
/// but empty or `0`) this panics, so CI cannot pass by skipping; otherwise it says on stderr
/// that the tests skip, and the caller returns.
pub fn skip_without_device(why: &str) {
    if let Err(msg) = skip_decision(std::env::var(REQUIRE_OPENCL_VAR).ok().as_deref(), why) {
        panic!("{msg}");
    }
    eprintln!("skipping OpenCL tests: {why}");
}

fn skip_decision(required: Option<&str>, why: &str) -> Result<(), String> {
    match required {
        Some(v) if !v.is_empty() && v != "0" => Err(format!(
            "no usable OpenCL device ({why}), but {REQUIRE_OPENCL_VAR}={v} requires the OpenCL tests to run"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
