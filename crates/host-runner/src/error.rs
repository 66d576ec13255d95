use std::fmt;

/// Everything that can go wrong between "here is a launch plan" and "here are the bytes".
///
/// Every variant renders as one sentence (plus the driver's log for [`Error::Build`]), because
/// these messages reach the user of `lift run` unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The OpenCL loader is missing or reports no platform.
    NoPlatform(String),
    /// Platforms exist but none of them has a usable device.
    NoDevice(String),
    /// `Session::open(Some(wanted))` matched no device; `available` holds the `P:D` ids.
    UnknownDevice { wanted: String, available: Vec<String> },
    /// The OpenCL C compiler rejected the program.
    Build { log: String },
    /// A buffer (or the sum of several) exceeds a device memory limit.
    TooLarge { what: String, bytes: u64, limit: u64 },
    /// A launch's NDRange does not fit the device or the kernel.
    WorkGroup {
        launch: usize,
        kernel: String,
        reason: String,
    },
    /// The program has no kernel of that name.
    UnknownKernel { launch: usize, kernel: String },
    /// The plan or the options contradict themselves (bad index, wrong data length, ...).
    InvalidPlan(String),
    /// A `ReadSpec::Counted` found a count that does not fit its buffer.
    BadCount {
        buffer: String,
        count: i64,
        elem_bytes: usize,
        buffer_bytes: usize,
    },
    /// Any other failing OpenCL call.
    Cl { call: &'static str, code: i32 },
}

impl std::error::Error for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoPlatform(why) => write!(f, "no OpenCL platform found ({why})"),
            Error::NoDevice(why) => write!(f, "no OpenCL device found ({why})"),
            Error::UnknownDevice { wanted, available } => {
                if available.is_empty() {
                    write!(f, "no OpenCL device matches {wanted:?}, and no device is available")
                } else {
                    write!(
                        f,
                        "no OpenCL device matches {wanted:?}; available ids: {} \
                         (`lift devices` lists their names)",
                        available.join(", ")
                    )
                }
            }
            Error::Build { log } => {
                write!(f, "the OpenCL program failed to build; build log:\n{}", log.trim_end())
            }
            Error::TooLarge { what, bytes, limit } => write!(
                f,
                "{what} needs {bytes} bytes ({}), more than the device limit of {limit} bytes ({})",
                human_bytes(*bytes),
                human_bytes(*limit)
            ),
            Error::WorkGroup { launch, kernel, reason } => {
                write!(
                    f,
                    "launch {launch} (kernel `{kernel}`) has an invalid NDRange: {reason}"
                )
            }
            Error::UnknownKernel { launch, kernel } => {
                write!(
                    f,
                    "launch {launch} names kernel `{kernel}`, which the program does not define"
                )
            }
            Error::InvalidPlan(why) => write!(f, "invalid launch plan: {why}"),
            Error::BadCount {
                buffer,
                count,
                elem_bytes,
                buffer_bytes,
            } => write!(
                f,
                "the device reported {count} result elements of {elem_bytes} bytes for buffer \
                 `{buffer}`, which holds only {buffer_bytes} bytes"
            ),
            Error::Cl { call, code } => write!(
                f,
                "OpenCL call {call} failed with {} ({code})",
                opencl3::error_codes::error_text(*code)
            ),
        }
    }
}

/// Binary units with one decimal, used both in error messages and in the device table.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Adapter for `map_err`: names the C entry point so a failure says which step broke.
pub(crate) fn cl(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> Error {
    move |e| Error::Cl { call, code: e.0 }
}
