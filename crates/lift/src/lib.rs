//! The `lift` driver: the pipeline as a readable list of stage calls, and the CLI's commands.
//! No compiler logic lives here beyond ordering the passes and converting data.

pub mod backend;
pub mod data;
pub mod report;
pub mod tune;

use ir::{Diagnostic, Program};
use typeck::TypeInfo;

/// Front end: read, normalize and type a program.
pub fn front(src: &str) -> Result<(Program, TypeInfo), Diagnostic> {
    let prog = ir::parse(src)?;
    let info = typeck::infer(&prog)?;
    Ok((prog, info))
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
    Plain { message: String, notes: Vec<String> },
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
            Error::Plain { message, notes } => report::render_plain(message, notes),
        }
    }
    pub fn message(&self) -> String {
        match self {
            Error::Source(d) => d.message.clone(),
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

/// `lift compile`: the text of one stage.
pub fn compile_text(src: &str, emit: Emit) -> Result<String, Error> {
    let (prog, info) = front(src)?;
    match emit {
        Emit::Types => Ok(info.render(&prog)),
        Emit::Cl | Emit::Views | Emit::Plan if is_high_level(&prog) => {
            // High-level programs compile as the cost model's best variant (sizes symbolic).
            let ropts = rewrite::Options {
                top_k: 1,
                ..rewrite::Options::default()
            };
            let best = rewrite::explore(&prog, &info, &ropts)
                .ok()
                .and_then(|x| x.variants.into_iter().next());
            match best.map(|v| v.source).and_then(|v| front(&v).ok()) {
                Some((vprog, vinfo)) => backend_text(&vprog, &vinfo, emit),
                None => backend_text(&prog, &info, emit),
            }
        }
        Emit::Cl | Emit::Views | Emit::Plan => backend_text(&prog, &info, emit),
    }
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

/// `lift run`: load inputs, check sizes, run on the chosen backend.
pub fn run_files(src: &str, data: &[String], sizes: &[String], opts: &RunOptions) -> Result<RunResult, Error> {
    let (prog, info) = front(src)?;
    let sources = read_sources(data)?;
    let given = parse_sizes(sizes)?;
    let inputs = data::load(&prog, &sources, &given)?;
    if !opts.interp && is_high_level(&prog) {
        // A variant may have dropped a primitive that the program's checks come from (`join ∘
        // split = id`), and its inputs are declared under them: they are the program's.
        let lookup = |n: &str| inputs.sizes.get(n).copied();
        for c in &info.checks {
            c.verify(&lookup)
                .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
        }
        // A high-level program runs as its tuned variant for these sizes and this device, else
        // as the cost model's best variant.
        let sizes: Vec<String> = inputs.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let device = host_runner::Session::open(opts.device.as_deref())
            .map(|s| s.info().name.clone())
            .ok();
        let chosen = device.and_then(|d| tune::best_variant(src, &sizes, &d)).or_else(|| {
            let ropts = rewrite::Options {
                sizes: inputs.sizes.clone(),
                top_k: 1,
                ..rewrite::Options::default()
            };
            rewrite::explore(&prog, &info, &ropts)
                .ok()
                .and_then(|x| x.variants.into_iter().next())
                .map(|v| v.source)
        });
        if let Some(variant) = chosen {
            if let Ok((vprog, vinfo)) = front(&variant) {
                return run_inputs(&vprog, &vinfo, &inputs, opts);
            }
        }
    }
    run_inputs(&prog, &info, &inputs, opts)
}

/// Whether a program still holds high-level `map`, `reduce` or `filter`.
pub fn is_high_level(prog: &Program) -> bool {
    prog.exprs
        .iter()
        .any(|e| matches!(e, ir::Expr::Prim { prim, .. } if prim.is_high_level_only()))
}

/// Runs a typed program on loaded inputs.
pub fn run_inputs(
    prog: &Program,
    info: &TypeInfo,
    inputs: &data::Inputs,
    opts: &RunOptions,
) -> Result<RunResult, Error> {
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    for c in &info.checks {
        c.verify(&lookup)
            .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
    }
    let (value, timing) = if opts.interp {
        let v = ir::interp::eval(prog, &inputs.values, &lookup)
            .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
        (v, None)
    } else {
        backend_run(prog, info, inputs, opts)?
    };
    let json = value.to_json();
    Ok(RunResult {
        value,
        ty: info.result().clone(),
        json,
        timing,
    })
}

fn backend_text(prog: &Program, info: &TypeInfo, emit: Emit) -> Result<String, Error> {
    let plan = codegen_opencl::emit(prog, info)?;
    Ok(match emit {
        Emit::Cl => plan.source,
        Emit::Plan => plan.describe(),
        Emit::Views => plan.views,
        Emit::Types => unreachable!("handled by the caller"),
    })
}

fn backend_run(
    prog: &Program,
    info: &TypeInfo,
    inputs: &data::Inputs,
    opts: &RunOptions,
) -> Result<(ir::interp::Value, Option<String>), Error> {
    let plan = codegen_opencl::emit(prog, info)?;
    backend::run(&plan, inputs, opts.device.as_deref(), opts.time)
}

/// `lift bench`: random inputs at the given sizes, kernel times (median over repeats) next to a
/// device-to-device copy of the input bytes measured in the same session.
pub fn bench(src: &str, sizes: &[String], device: Option<&str>, repeats: usize, check: bool) -> Result<String, Error> {
    let (prog, info) = front(src)?;
    let given = parse_sizes(sizes)?;
    let sizes: std::collections::BTreeMap<String, i64> = given.into_iter().collect();
    let inputs = data::random_inputs(&prog, &sizes, 42)?;
    let lookup = |n: &str| inputs.sizes.get(n).copied();
    for c in &info.checks {
        c.verify(&lookup)
            .map_err(|m| Error::Source(Diagnostic::new(c.span, m)))?;
    }
    let t0 = std::time::Instant::now();
    let plan = codegen_opencl::emit(&prog, &info)?;
    let codegen_ms = t0.elapsed().as_secs_f64() * 1e3;
    let m = backend::run_measured(&plan, &inputs, device, true, repeats, true)?;
    let mut out = format!(
        "device: {}
sizes: {}
code generation: {codegen_ms:.2} ms
",
        m.device,
        sizes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let total: u64 = m.kernel_ns.iter().map(|(_, t)| *t).sum();
    for (k, t) in &m.kernel_ns {
        out.push_str(&format!(
            "  {k}: {:.4} ms
",
            *t as f64 / 1e6
        ));
    }
    out.push_str(&format!(
        "kernels total (median of {repeats}): {:.4} ms
",
        total as f64 / 1e6
    ));
    if let Some(c) = m.copy_ns {
        out.push_str(&format!(
            "baseline copy of {} input bytes: {:.4} ms
ratio kernels/copy: {:.2}
",
            m.input_bytes,
            c / 1e6,
            total as f64 / c
        ));
    }
    if check {
        let expect = ir::interp::eval(&prog, &inputs.values, &lookup)
            .map_err(|e| Error::Source(Diagnostic::new(e.span, e.message)))?;
        let ok = values_close(&expect, &m.value, 1e-4);
        out.push_str(&format!(
            "result equals the interpreter: {}\n",
            if ok { "yes" } else { "NO" }
        ));
        if !ok {
            return Err(Error::plain(format!(
                "{out}the OpenCL result differs from the interpreter"
            )));
        }
    }
    Ok(out)
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
