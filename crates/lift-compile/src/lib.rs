//! The compile pipeline: the one place the compiler's stages are chained ([`compile`]). No
//! compiler logic lives here beyond ordering the passes.
//!
//! ```text
//! source ─ir::parse─▶ Program ─typeck::infer─▶ TypeInfo ─(high-level: the tuning cache or
//! rewrite::explore)─▶ variant ─validate::validate─▶ ─codegen_opencl::emit─▶ KernelPlan
//! ```
//!
//! A program with host sections is compiled unit by unit around them ([`host`]); the tuning
//! cache that `lift tune` writes and [`compile`] reads is [`cache`]; every stage's failure is an
//! [`Error`], rendered with its source place by [`report`].

pub mod cache;
mod error;
pub mod host;
pub mod report;

pub use error::Error;
/// `--precision` (re-exported for the callers that set [`Options::precision`]).
pub use ir::Precision;

use codegen_opencl::KernelPlan;
use ir::Program;
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
    /// `--precision`: the arithmetic products summed in reductions may use
    /// (`codegen_opencl::EmitOptions::precision`).
    pub precision: ir::Precision,
    /// The NVIDIA compute capability of the device the code is for
    /// (`host_runner::DeviceInfo::compute_capability`); `None`: not an NVIDIA device, or no
    /// device known. With [`Options::precision`] `tf32` and 8.0 or later, code generation may
    /// use tensor cores.
    pub compute_capability: Option<(u32, u32)>,
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

/// [`compile`] of a program already read and typed (`typed`, a [`Options::types_only`]
/// compilation of `source`): a caller compiling one text several times (`lift build`: for its
/// sizes and generic) reads and types it once.
pub fn compile_typed(typed: &Compiled, source: &str, opts: &Options) -> Result<Compiled, Error> {
    compile_inferred(typed.given.clone(), typed.given_info.clone(), Some(source), opts)
}

fn compile_from(given: Program, source: Option<&str>, opts: &Options) -> Result<Compiled, Error> {
    let given_info = typeck::infer(&given)?;
    compile_inferred(given, given_info, source, opts)
}

fn compile_inferred(
    given: Program,
    given_info: TypeInfo,
    source: Option<&str>,
    opts: &Options,
) -> Result<Compiled, Error> {
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
    if host::is_host_program(&given_info) {
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
    // A `let`-bound tuple of filter results taken apart is bound component by component, so
    // that each filter result has the binder that bounds its length.
    let (program, info) = match rewrite::split_tuple_lets(&program, &info) {
        Some((p, i)) => (p, i),
        None => (program, info),
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
        precision: opts.precision,
        compute_capability: opts.compute_capability,
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

/// Whether code for these options may use TF32 tensor cores: `--precision tf32` on an NVIDIA
/// device of compute capability 8.0 or later (`codegen_opencl::EmitOptions::tensor_cores`).
pub fn tensor_cores(opts: &Options) -> bool {
    codegen_opencl::EmitOptions {
        precision: opts.precision,
        compute_capability: opts.compute_capability,
        ..codegen_opencl::EmitOptions::default()
    }
    .tensor_cores()
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
    // with tensor cores, the variants `lift tune --precision tf32` timed (kept apart from f32's)
    let precision = if tensor_cores(opts) {
        ir::Precision::Tf32
    } else {
        ir::Precision::F32
    };
    let device = opts.tuned_for.as_ref().map(|d| cache::precision_key(d, precision));
    if let (Some(src), Some(device)) = (source, &device) {
        let sizes: Vec<String> = opts.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        // The cache holds text from an earlier run, maybe of an older compiler: it is used only
        // while it still reads, types and validates.
        let tuned = cache::tuned_entry(src, &sizes, device).and_then(|t| {
            let p = ir::parse(&t.source).ok()?;
            let i = typeck::infer(&p).ok()?;
            let known = if t.built_in { built_in(opts) } else { BTreeMap::new() };
            validate::validate_with(&p, &i, &known).ok()?;
            Some((p, i, t))
        });
        if let Some((p, i, t)) = tuned {
            let cache::Tuned {
                source: text,
                description,
                work_group,
                built_in: sizes_built_in,
            } = t;
            let mut wg = if work_group.is_empty() {
                String::new()
            } else {
                format!("; mapGlb work-group {}", cache::work_group_text(&work_group))
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
        tensor_cores: tensor_cores(opts),
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

/// `lift compile --emit`: the text of one stage.
pub fn compile_text(src: &str, emit: Emit) -> Result<String, Error> {
    let opts = Options {
        types_only: emit == Emit::Types,
        ..Options::default()
    };
    compile(src, &opts)?.text(emit)
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

/// Whether a program still holds high-level `map`, `reduce` or `filter`, or fixes no mapping at
/// all (a view of its inputs, `(transpose m)`: exploration makes it the copy the rules tile).
pub fn is_high_level(prog: &Program) -> bool {
    use ir::Prim as P;
    let prims = || {
        prog.exprs.iter().filter_map(|e| match e {
            ir::Expr::Prim { prim, .. } => Some(prim),
            _ => None,
        })
    };
    let view = |p: &P| {
        matches!(
            p,
            P::Zip
                | P::Split(_)
                | P::Join
                | P::Transpose
                | P::Slide(..)
                | P::PadClamp(..)
                | P::ReorderStride(_)
                | P::Reverse
                | P::AsVector(_)
                | P::AsScalar
        )
    };
    prims().any(P::is_high_level_only) || (prims().next().is_some() && prims().all(view))
}
