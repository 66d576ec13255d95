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

pub mod backend;
pub mod bench;
pub mod data;
pub mod devices;
pub mod host;
pub mod report;
pub mod tune;

use codegen_opencl::KernelPlan;
use ir::{Diagnostic, Program};
use std::collections::BTreeMap;
use typeck::TypeInfo;

/// What [`compile`] does with a program.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop after type checking (`lift check`, `--emit types`, the interpreter): no variant is
    /// chosen, nothing is validated or emitted.
    pub types_only: bool,
    /// Compile a high-level program as written (the default lowering) instead of as the best
    /// variant found by `rewrite`.
    pub as_written: bool,
    /// Sizes known at compile time: `rewrite` decides divisibility and costs with them, and the
    /// tuning cache is keyed by them.
    pub sizes: BTreeMap<String, i64>,
    /// The name of the device whose tuned variant (`lift tune`'s cache) a high-level program
    /// compiles as, when the cache holds one for this source text and these sizes.
    pub tuned_for: Option<String>,
    /// Work-group size of `mapGlb` kernels per dimension (a tuning parameter; empty: the
    /// tuned one when the tuning cache gives the variant, else the default 256).
    pub work_group: Vec<usize>,
    /// The work-group limits of the device the code is for ([`work_group_limit`]); `None`:
    /// no device is known (`lift compile`), the common GPU limit of 1024 work-items.
    pub work_group_limit: Option<codegen_opencl::WorkGroupLimit>,
    /// Build [`Options::sizes`] into the kernels (`codegen_opencl::EmitOptions::known_sizes`):
    /// the plan then runs at these sizes only. Off for a program with host sections (its
    /// units also run at the check sizes of `lift bench`).
    pub specialise: bool,
    /// Sizes kept as kernel arguments even with `specialise`: a slice's length, where one
    /// compilation serves the slices of one device (`lift run --devices`).
    pub vary: Vec<String>,
}

impl Options {
    /// Read and type-check only: what every caller that needs a program's types and sizes asks.
    pub fn types_only() -> Options {
        Options {
            types_only: true,
            ..Options::default()
        }
    }
}

/// The variant a high-level program was compiled as.
#[derive(Clone, Debug)]
pub struct Chosen {
    /// Its mapping decisions and rewritten term (`rewrite::Variant::description`).
    pub description: String,
    /// Its LIFT source.
    pub source: String,
    /// Taken from the tuning cache, rather than the cost model's best.
    pub tuned: bool,
    /// The `mapGlb` work-group size tuned with it (empty: the default).
    pub work_group: Vec<usize>,
    /// Its kernels are built for [`Options::sizes`] where [`Options::specialise`] asks for it;
    /// `false` where `lift tune` timed them faster with the sizes as kernel arguments.
    pub built_in: bool,
}

/// A compiled program: what later stages and `--emit` need.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The program as given, with its types.
    pub given: Program,
    pub given_info: TypeInfo,
    /// What was compiled: the chosen variant of a high-level program, else the program itself.
    pub program: Program,
    pub info: TypeInfo,
    pub variant: Option<Chosen>,
    /// The kernels and their launch plan (`None` with [`Options::types_only`], and for a
    /// host program).
    pub plan: Option<KernelPlan>,
    /// A program with host sections: its units and host steps (then `plan` is `None`).
    pub host: Option<host::HostProgram>,
}

impl Compiled {
    /// The text `lift compile --emit` prints: the given program's types, or a form of the code.
    pub fn text(&self, emit: Emit) -> Result<String, Error> {
        if emit == Emit::Types {
            return Ok(self.given_info.render(&self.given));
        }
        if let Some(h) = &self.host {
            return Ok(match emit {
                Emit::Cl => h.source(),
                Emit::Plan => h.describe(),
                Emit::Views => h.views(),
                Emit::Types => unreachable!("returned above"),
            });
        }
        let plan = self
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: code was asked of a program compiled only to its types"))?;
        Ok(match emit {
            Emit::Cl => plan.source.clone(),
            // (the tuning cache's choice: `describe` names sizes built in, not their absence)
            Emit::Plan => match &self.variant {
                Some(v) if v.tuned && !v.built_in => format!(
                    "tuned configuration: sizes as kernel arguments (lift tune timed them faster than built in)\n{}",
                    plan.describe()
                ),
                Some(_) | None => plan.describe(),
            },
            Emit::Views => plan.views.clone(),
            Emit::Types => unreachable!("returned above"),
        })
    }
}

/// Reads, types and compiles a program (see the crate docs). A high-level program compiles as
/// its tuned variant for [`Options::tuned_for`] when the tuning cache has one for this text,
/// else as the cost model's best variant at [`Options::sizes`], else (no variant) as written.
pub fn compile(source: &str, opts: &Options) -> Result<Compiled, Error> {
    let prog = ir::parse(source)?;
    compile_from(prog, Some(source), opts)
}

/// [`compile`] for a program already parsed (without the tuning cache, which is keyed by text).
pub fn compile_program(prog: Program, opts: &Options) -> Result<Compiled, Error> {
    compile_from(prog, None, opts)
}

fn compile_from(given: Program, source: Option<&str>, opts: &Options) -> Result<Compiled, Error> {
    let given_info = typeck::infer(&given)?;
    if opts.types_only {
        return Ok(Compiled {
            program: given.clone(),
            info: given_info.clone(),
            given,
            given_info,
            variant: None,
            plan: None,
            host: None,
        });
    }
    // A program with host sections is compiled unit by unit around them (`host`).
    if host::is_host_program(&given, &given_info) {
        // Every kernel-level error of every part at once, at its place; each unit is then
        // compiled (and validated again) on its own.
        validate::validate(&given, &given_info).map_err(Error::Invalid)?;
        let units = Options {
            specialise: false,
            ..opts.clone()
        };
        let hp = host::build(&given, &given_info, &units)?;
        return Ok(Compiled {
            program: given.clone(),
            info: given_info.clone(),
            given,
            given_info,
            variant: None,
            plan: None,
            host: Some(hp),
        });
    }
    let chosen = (!opts.as_written && is_high_level(&given))
        .then(|| choose_variant(&given, &given_info, source, opts))
        .flatten();
    let (program, info, variant) = match chosen {
        Some((p, i, c)) => (p, i, Some(c)),
        None => (given.clone(), given_info.clone(), None),
    };
    // Kernels built for their sizes are validated with them: a private array or an unrolled
    // loop whose length they fix is legal there, and refused (with its span) in generic ones.
    // A tuned configuration keeps the sizes as arguments where that was timed faster.
    let known_sizes = match &variant {
        Some(c) if !c.built_in => BTreeMap::new(),
        _ => built_in(opts),
    };
    validate::validate_with(&program, &info, &known_sizes).map_err(Error::Invalid)?;
    let glb_work_group = match &variant {
        Some(c) if opts.work_group.is_empty() => c.work_group.clone(),
        _ => opts.work_group.clone(),
    };
    let eopts = codegen_opencl::EmitOptions {
        glb_work_group,
        work_group_limit: opts.work_group_limit.clone().unwrap_or_default(),
        known_sizes,
    };
    let plan = codegen_opencl::emit_with(&program, &info, &eopts)?;
    Ok(Compiled {
        given,
        given_info,
        program,
        info,
        variant,
        plan: Some(plan),
        host: None,
    })
}

/// The sizes [`Options::specialise`] builds into the kernels: [`Options::sizes`] but for
/// [`Options::vary`]; none without it.
fn built_in(opts: &Options) -> BTreeMap<String, i64> {
    if !opts.specialise {
        return BTreeMap::new();
    }
    (opts.sizes.iter())
        .filter(|(n, _)| !opts.vary.contains(n))
        .map(|(n, v)| (n.clone(), *v))
        .collect()
}

/// The tuned variant, else the cost model's best; `None` when exploration finds none.
fn choose_variant(
    prog: &Program,
    info: &TypeInfo,
    source: Option<&str>,
    opts: &Options,
) -> Option<(Program, TypeInfo, Chosen)> {
    if let (Some(src), Some(device)) = (source, &opts.tuned_for) {
        let sizes: Vec<String> = opts.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        // The cache holds text from an earlier run, maybe of an older compiler: it is used only
        // while it still reads, types and validates.
        let tuned = tune::tuned_entry(src, &sizes, device).and_then(|t| {
            let p = ir::parse(&t.source).ok()?;
            let i = typeck::infer(&p).ok()?;
            let known = if t.built_in { built_in(opts) } else { BTreeMap::new() };
            validate::validate_with(&p, &i, &known).ok()?;
            Some((p, i, t))
        });
        if let Some((p, i, t)) = tuned {
            let tune::Tuned {
                source: text,
                description,
                work_group,
                built_in: sizes_built_in,
            } = t;
            let mut wg = if work_group.is_empty() {
                String::new()
            } else {
                format!("; mapGlb work-group {}", tune::work_group_text(&work_group))
            };
            if !sizes_built_in && opts.specialise {
                wg.push_str("; sizes as kernel arguments (timed faster than built in)");
            }
            let chosen = Chosen {
                description: if description.is_empty() {
                    format!("tuned for {device}{wg}")
                } else {
                    format!("tuned: {description}{wg}")
                },
                source: text,
                tuned: true,
                work_group,
                built_in: sizes_built_in,
            };
            return Some((p, i, chosen));
        }
    }
    let ropts = rewrite::Options {
        sizes: opts.sizes.clone(),
        top_k: 1,
        built_in: built_in(opts),
        ..rewrite::Options::default()
    };
    let v = rewrite::explore(prog, info, &ropts).ok()?.variants.into_iter().next()?;
    let chosen = Chosen {
        description: v.description,
        source: v.source,
        tuned: false,
        work_group: vec![],
        built_in: true,
    };
    Some((v.program, v.info, chosen))
}

/// The program's type as `(param types) -> result`.
pub fn signature(prog: &Program, info: &TypeInfo) -> String {
    let ps: Vec<String> = prog.params.iter().map(|p| p.ty.to_string()).collect();
    let sizes = if prog.sizes.is_empty() {
        String::new()
    } else {
        format!("∀ {}. ", prog.sizes.join(" "))
    };
    format!("{sizes}({}) -> {}", ps.join(", "), info.result())
}

/// What `lift compile --emit` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Cl,
    Types,
    Views,
    Plan,
}

/// A failure of any stage, with a source place where there is one.
#[derive(Debug)]
pub enum Error {
    Source(Diagnostic),
    /// Everything `validate` found wrong with the program (at least one).
    Invalid(Vec<Diagnostic>),
    Plain {
        message: String,
        notes: Vec<String>,
    },
}

impl Error {
    pub fn plain(message: impl Into<String>) -> Error {
        Error::Plain {
            message: message.into(),
            notes: vec![],
        }
    }
    pub fn render(&self, file: &str, src: &str) -> String {
        match self {
            Error::Source(d) => report::render(d, file, src),
            Error::Invalid(ds) => ds
                .iter()
                .map(|d| report::render(d, file, src))
                .collect::<Vec<_>>()
                .join("\n"),
            Error::Plain { message, notes } => report::render_plain(message, notes),
        }
    }
    pub fn message(&self) -> String {
        match self {
            Error::Source(d) => d.message.clone(),
            Error::Invalid(ds) => ds.iter().map(|d| d.message.as_str()).collect::<Vec<_>>().join("; "),
            Error::Plain { message, .. } => message.clone(),
        }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Source(d)
    }
}

impl From<data::DataError> for Error {
    fn from(e: data::DataError) -> Error {
        Error::Plain {
            message: e.message,
            notes: e.notes,
        }
    }
}

/// `lift compile --emit`: the text of one stage.
pub fn compile_text(src: &str, emit: Emit) -> Result<String, Error> {
    let opts = Options {
        types_only: emit == Emit::Types,
        ..Options::default()
    };
    compile(src, &opts)?.text(emit)
}

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

/// Parses `--size N=1024` arguments.
pub fn parse_sizes(sizes: &[String]) -> Result<Vec<(String, i64)>, Error> {
    sizes
        .iter()
        .map(|s| {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| Error::plain(format!("--size {s}: expected NAME=VALUE, e.g. N=1024")))?;
            let (k, v) = (k.trim(), v.trim());
            let v: i64 = v.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    Error::plain(format!("--size: {k}={v} does not fit a 64-bit integer"))
                }
                _ => Error::plain(format!("--size {s}: `{v}` is not an integer")),
            })?;
            Ok((k.to_string(), v))
        })
        .collect()
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
    let compiled = compile(src, &run_options(&typed.given, &inputs.sizes, device.as_ref()))?;
    run_compiled(&compiled, &inputs, opts)
}

/// How `lift run` compiles `given` for `device` at `sizes`: a high-level program as its tuned
/// variant for the device when the tuning cache has one, every kernel within the device's
/// work-group limits and built for these sizes; without a device, none of these.
pub(crate) fn run_options(
    given: &Program,
    sizes: &BTreeMap<String, i64>,
    device: Option<&host_runner::DeviceInfo>,
) -> Options {
    Options {
        sizes: sizes.clone(),
        tuned_for: device.filter(|_| is_high_level(given)).map(|d| d.name.clone()),
        work_group_limit: device.map(work_group_limit),
        specialise: device.is_some(),
        ..Options::default()
    }
}

/// A device's work-group limits as code generation takes them: the queried
/// `CL_DEVICE_MAX_WORK_GROUP_SIZE` and `CL_DEVICE_MAX_WORK_ITEM_SIZES`, already lowered by
/// `LIFT_MAX_WORK_GROUP_SIZE` where it is set (`host_runner::MAX_WORK_GROUP_VAR`), so that the
/// kernels fit the device rather than being refused at launch, and its local memory.
pub fn work_group_limit(d: &host_runner::DeviceInfo) -> codegen_opencl::WorkGroupLimit {
    codegen_opencl::WorkGroupLimit::new(d.max_work_group_size, &d.max_work_item_sizes).with_local_mem(d.local_mem_bytes)
}

/// Whether a program still holds high-level `map`, `reduce` or `filter`.
pub fn is_high_level(prog: &Program) -> bool {
    prog.exprs
        .iter()
        .any(|e| matches!(e, ir::Expr::Prim { prim, .. } if prim.is_high_level_only()))
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
        (_, Some(h)) => backend::run_host(h, inputs, opts.device.as_deref(), opts.time)?,
        (Some(plan), None) => backend::run(plan, inputs, opts.device.as_deref(), opts.time)?,
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
