//! `lift build`: a compiled program as a C library, `DIR/<prog>.h` and `DIR/lib<prog>.so`.
//!
//! The library is generated C alone. [`gen`] writes one C file: the hand-written runtime
//! (`runtime.c`: OpenCL declarations, the context with its lock, last error and pool of freed
//! buffers, device arrays), each variant's kernels as a string literal, and each variant's launch
//! plan as straight-line C ([`launch`]); the header declares the API. The system C compiler
//! (`$CC`, else `cc`) then builds the `.so`, which needs only the OpenCL ICD loader
//! (`libOpenCL.so.1`) and libc: building it needs no OpenCL headers.
//!
//! Variants: with `--size`, the kernels built for those sizes (every length a constant; the
//! variant `lift tune` found for them on `--device`, else the cost model's). Beside them, when
//! every size is some argument's dimension, generic kernels that take the sizes as arguments:
//! the cost model's variant for unknown sizes, and the program as written where that variant
//! adds conditions on the sizes (a `split #128`) that the arguments do not meet. `<prog>_run`
//! picks by the arguments' shapes and `<prog>_used` says which ran. Without `--size` only the
//! generic kernels are built.
//!
//! What a library can hold today: a program whose plan is a sequence of kernel launches on one
//! device, with arrays of scalars as parameters and result; filters inside it, and a result that
//! is a filter's (a vector whose length the kernels count, read back with the run). Host
//! sections, rows of filter results and tuple arrays are refused before anything is written.

mod gen;
mod host;
mod launch;
mod run;

use gen::Shape;
use launch::Lengths;
use lift_compile::{compile, compile_typed, Error, Options};
use memalloc::Role;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`build`] wrote.
pub struct Built {
    pub header: PathBuf,
    pub library: PathBuf,
    /// The generated C the library was compiled from (kept for reading and debugging).
    pub source: PathBuf,
}

/// Compiles `source` (the program in file `path`) for `sizes` and the device `device` (its
/// work-group limits and tuned variant), and writes the header, C source and shared library
/// into `out`; at `precision` (`--precision`, refused at `tf32` where the device has no TF32
/// tensor cores).
pub fn build(
    path: &Path,
    source: &str,
    sizes: &BTreeMap<String, i64>,
    device: Option<&str>,
    out: &Path,
    precision: ir::Precision,
) -> Result<Built, Error> {
    let name = library_name(path)?;
    let typed = compile(source, &Options::types_only())?;
    let given = &typed.given;
    let interface = || -> Result<_, Error> {
        let params: Vec<(String, Shape)> = given
            .params
            .iter()
            .map(|p| {
                let n = given.var(p.var).name.clone();
                gen::c_name(&n)?;
                let s = gen::shape_of(&p.ty, &format!("parameter `{n}`"))?;
                Ok((n, s))
            })
            .collect::<Result<_, Error>>()?;
        let result = match typed.given_info.result() {
            // A filter's result: a vector whose length the run counts.
            ir::Type::Exists(elem) => match gen::shape_of(elem, "the result's elements")? {
                Shape::Scalar(s) if s != ir::Scalar::Bool => (gen::Kind { elem: s, rank: 1 }, vec![]),
                _ => {
                    return Err(not_supported(
                        "a result that is a filter's result of arrays or booleans",
                    ))
                }
            },
            t => match gen::shape_of(t, "the result")? {
                Shape::Array(k, dims) => (k, dims),
                Shape::Scalar(_) => return Err(not_supported("a scalar result")),
            },
        };
        Ok((params, result))
    };
    let (params, result) = match interface() {
        Ok(i) => i,
        // A program refused for its plan (rows of filter results) says so rather than naming
        // the parameter or result that its plan makes; a host program's plan is no refusal.
        Err(e) if lift_compile::host::is_host_program(&typed.given_info) => return Err(e),
        Err(e) => {
            let probe = compile_typed(&typed, source, &lift_runtime::run_options(given, sizes, None))?;
            plan_of(&probe)?;
            return Err(e);
        }
    };
    // Where the generic kernels read each size: the first argument dimension that is that size.
    let from: Option<Vec<(String, String, usize, usize)>> = given
        .sizes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            params.iter().enumerate().find_map(|(p, (_, shape))| match shape {
                Shape::Array(_, dims) => dims
                    .iter()
                    .position(|d| d.as_var().is_some_and(|(n, _)| n == s))
                    .map(|d| (s.clone(), format!("lr_z{i}"), p, d)),
                Shape::Scalar(_) => None,
            })
        })
        .collect();
    let missing: Vec<&str> = given
        .sizes
        .iter()
        .filter(|s| !sizes.contains_key(*s))
        .map(String::as_str)
        .collect();
    // Without sizes the library holds the generic kernels only, which need every size to be an
    // argument's dimension; with some, it needs them all.
    if !missing.is_empty() && (from.is_none() || missing.len() < given.sizes.len()) {
        let example: Vec<String> = missing.iter().map(|s| format!("--size {s}=…")).collect();
        return Err(Error::plain(format!(
            "`lift build` needs {}: give {}",
            if from.is_none() {
                "every size, as some are not the length of an argument"
            } else {
                "every size or none"
            },
            example.join(" ")
        )));
    }
    // Without a device the plans are still generated (the cost model's variant, the common
    // work-group limits); the library then runs on whatever device its user opens.
    let info = host_runner::device_info(device).ok();
    if device.is_some() && info.is_none() {
        let e = host_runner::device_info(device)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err(Error::plain(e));
    }
    let device_name = info.as_ref().map_or("the device", |d| d.name.as_str());
    if lift_compile::host::is_host_program(&typed.given_info) {
        let lengths = match &from {
            Some(from) if !missing.is_empty() => Lengths::Generic {
                vars: from.iter().map(|(user, var, ..)| (user.clone(), var.clone())).collect(),
                from: from.clone(),
            },
            _ => Lengths::Fixed(sizes.clone()),
        };
        if matches!(typed.given_info.result(), ir::Type::Exists(_)) {
            return Err(not_supported("a filter's result in a program with host sections"));
        }
        let b = HostBuild {
            name: &name,
            source,
            typed: &typed,
            params,
            result,
            sizes,
            lengths,
            info: info.as_ref(),
            precision,
        };
        return build_host(b, out);
    }
    // The kernels built for the sizes, and the generic ones: two compilations of the typed
    // program, each exploring its own variants, run side by side.
    let fixed_part = || -> Result<Option<lift_compile::Compiled>, Error> {
        if !missing.is_empty() {
            return Ok(None);
        }
        let mut opts = lift_runtime::run_options(given, sizes, info.as_ref());
        opts.specialise = true;
        // `tf32` is for the device the library is built on: refused where it has no tensor cores
        let opts = lift_runtime::with_precision(opts, precision, info.as_ref())?;
        let compiled = compile_typed(&typed, source, &opts)?;
        // The built sizes must meet the program's conditions, as `lift run` checks its inputs'.
        let lookup = |n: &str| sizes.get(n).copied();
        for check in typed.given_info.checks.iter().chain(&compiled.info.checks) {
            check
                .verify(&lookup)
                .map_err(|m| Error::Source(ir::Diagnostic::new(check.span, m)))?;
        }
        Ok(Some(compiled))
    };
    // The generic kernels: every size a kernel argument, the cost model's variant for sizes it
    // does not know (the tuning cache is keyed by sizes, so nothing tuned applies), and the
    // program as written where that variant adds conditions on the sizes.
    let generic_part = || -> Result<Vec<lift_compile::Compiled>, Error> {
        let generic_opts = lift_runtime::with_precision(
            Options {
                work_group_limit: info.as_ref().map(lift_runtime::work_group_limit),
                ..Options::default()
            },
            precision,
            info.as_ref(),
        )?;
        let mut generic = vec![];
        if from.is_none() || given.sizes.is_empty() {
            return Ok(generic);
        }
        let chosen = compile_typed(&typed, source, &generic_opts)?;
        let own: Vec<String> = typed
            .given_info
            .checks
            .iter()
            .map(|c| format!("{:?}", c.kind))
            .collect();
        let adds = chosen
            .info
            .checks
            .iter()
            .any(|c| !matches!(c.kind, typeck::CheckKind::Fits { .. }) && !own.contains(&format!("{:?}", c.kind)));
        generic.push(chosen);
        if adds {
            generic.push(compile_typed(
                &typed,
                source,
                &Options {
                    as_written: true,
                    ..generic_opts
                },
            )?);
        }
        Ok(generic)
    };
    let (fixed, generic) = std::thread::scope(|s| {
        // The compiler's passes need ir::STACK_BYTES of stack, as on the caller's thread.
        let other = std::thread::Builder::new()
            .stack_size(ir::STACK_BYTES)
            .spawn_scoped(s, generic_part);
        let fixed = fixed_part();
        let generic = match other {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(Error::plain(
                    "internal: the compilation of the generic kernels panicked",
                ))
            }),
            // No thread to be had: the two one after the other.
            Err(_) => generic_part(),
        };
        (fixed, generic)
    });
    // The first error in the order of the sequential build: the built sizes' first.
    let fixed = fixed?;
    let generic = generic?;
    let mut variants = vec![];
    if let Some(compiled) = &fixed {
        let mut env = sizes.clone();
        let plan = plan_of(compiled)?;
        for (user, c) in &plan.sizes {
            if let Some(v) = sizes.get(user) {
                env.insert(c.clone(), *v);
            }
        }
        let built: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        variants.push(gen::Variant {
            plan,
            lengths: Lengths::Fixed(env),
            checks: vec![],
            extra: vec![],
            description: format!(
                "{}, built for {}",
                chosen_text(compiled, device_name),
                if built.is_empty() {
                    "no sizes".to_string()
                } else {
                    built.join(", ")
                }
            ),
        });
    }
    let own: Vec<String> = typed
        .given_info
        .checks
        .iter()
        .map(|c| format!("{:?}", c.kind))
        .collect();
    for compiled in &generic {
        let Some(from) = &from else { break };
        let plan = plan_of(compiled)?;
        let mut vars: BTreeMap<String, String> =
            from.iter().map(|(user, var, ..)| (user.clone(), var.clone())).collect();
        for (user, c) in &plan.sizes {
            if let Some(v) = vars.get(user).cloned() {
                vars.insert(c.clone(), v);
            }
        }
        variants.push(gen::Variant {
            plan,
            lengths: Lengths::Generic {
                vars,
                from: from.clone(),
            },
            checks: typed.given_info.checks.iter().chain(&compiled.info.checks).collect(),
            extra: compiled
                .info
                .checks
                .iter()
                .filter(|c| !own.contains(&format!("{:?}", c.kind)))
                .collect(),
            description: format!(
                "{}, generic kernels (sizes as arguments)",
                chosen_text(compiled, "the device")
            ),
        });
    }
    let spec = gen::Spec {
        name: &name,
        params,
        counted: matches!(typed.given_info.result(), ir::Type::Exists(_)),
        result,
        built: sizes.clone(),
        variants,
        host: None,
    };
    emit(&spec, out)
}

/// Writes the header, the C source and the shared library of `spec` into `out`.
fn emit(spec: &gen::Spec, out: &Path) -> Result<Built, Error> {
    let name = spec.name;
    let lib = gen::generate(spec)?;
    std::fs::create_dir_all(out).map_err(|e| Error::plain(format!("cannot create {}: {e}", out.display())))?;
    let header = out.join(format!("{name}.h"));
    let c = out.join(format!("{name}.c"));
    let library = out.join(format!("lib{name}.so"));
    write(&header, &lib.header)?;
    write(&c, &lib.source)?;
    cc(&c, &library, out)?;
    Ok(Built {
        header,
        library,
        source: c,
    })
}

/// A host program's library (`host`): with every size built in, the units the cost model
/// chose for those sizes, which run at those sizes only; else the program as written, whose
/// units hold for every size the program's own conditions allow, the sizes read from the
/// arguments' shapes.
struct HostBuild<'a> {
    name: &'a str,
    source: &'a str,
    typed: &'a lift_compile::Compiled,
    params: Vec<(String, Shape)>,
    result: (gen::Kind, Vec<arith::ArithExpr>),
    sizes: &'a BTreeMap<String, i64>,
    lengths: Lengths,
    info: Option<&'a host_runner::DeviceInfo>,
    precision: ir::Precision,
}

fn build_host(b: HostBuild, out: &Path) -> Result<Built, Error> {
    let fixed = matches!(b.lengths, Lengths::Fixed(_));
    let opts = if fixed {
        lift_runtime::run_options(&b.typed.given, b.sizes, b.info)
    } else {
        Options {
            as_written: true,
            work_group_limit: b.info.map(lift_runtime::work_group_limit),
            ..Options::default()
        }
    };
    let opts = lift_runtime::with_precision(opts, b.precision, b.info)?;
    let compiled = compile_typed(b.typed, b.source, &opts)?;
    let hp = compiled
        .host
        .as_ref()
        .ok_or_else(|| Error::plain("internal: a host program compiled without its host steps"))?;
    let mut checks: Vec<&typeck::SizeCheck> = b.typed.given_info.checks.iter().collect();
    for u in &hp.units {
        checks.extend(&u.compiled.info.checks);
    }
    if fixed {
        // The built sizes must meet every condition, as `lift run` checks its inputs'.
        let lookup = |n: &str| b.sizes.get(n).copied();
        for check in &checks {
            check
                .verify(&lookup)
                .map_err(|m| Error::Source(ir::Diagnostic::new(check.span, m)))?;
        }
        checks.clear();
    }
    let built: Vec<String> = b.sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let description = format!(
        "a host program of {} part{}, {}",
        hp.units.len(),
        if hp.units.len() == 1 { "" } else { "s" },
        if fixed {
            format!(
                "the cost model's variants, built for {}",
                if built.is_empty() {
                    "no sizes".to_string()
                } else {
                    built.join(", ")
                }
            )
        } else {
            "the program as written, generic kernels (sizes as arguments)".to_string()
        }
    );
    let spec = gen::Spec {
        name: b.name,
        params: b.params,
        counted: false,
        result: b.result,
        built: if fixed { b.sizes.clone() } else { BTreeMap::new() },
        variants: vec![],
        host: Some(host::HostSpec {
            hp,
            lengths: b.lengths,
            checks,
            description,
        }),
    };
    emit(&spec, out)
}

/// The kernel plan of a compiled program, refusing what a library cannot hold yet.
fn plan_of(compiled: &lift_compile::Compiled) -> Result<&codegen_opencl::KernelPlan, Error> {
    if compiled.host.is_some() {
        return Err(Error::plain("internal: a host program's plan taken for a kernel plan"));
    }
    let plan = compiled
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: a compiled program without kernels"))?;
    // A filter's result is the result only as a vector (its length counted on the device);
    // rows of filter results are not.
    let vector = matches!(&plan.result.ty, ir::Type::Exists(e) if matches!(**e, ir::Type::Scalar(_)));
    if plan.result.lengths.is_some() && !vector {
        return Err(not_supported("a result that is an array of filter results"));
    }
    if plan
        .global_buffers()
        .any(|(_, b)| matches!(b.role, Role::InputLength(_)))
    {
        return Err(not_supported("parameters that are filter results"));
    }
    if plan.result.parts.len() != 1 {
        return Err(not_supported("a result holding tuples of arrays"));
    }
    Ok(plan)
}

/// Which variant a compilation holds, as `lift run --time` says it.
fn chosen_text(compiled: &lift_compile::Compiled, device: &str) -> String {
    match &compiled.variant {
        Some(v) if v.tuned => format!(
            "the variant `lift tune` found fastest on {device}: {}",
            v.description.lines().next().unwrap_or_default()
        ),
        Some(v) => format!(
            "the cost model's best variant: {}",
            v.description.lines().next().unwrap_or_default()
        ),
        None => "the program as written".to_string(),
    }
}

/// The refusal of a program `lift build` cannot make a library of yet.
pub(crate) fn not_supported(feature: &str) -> Error {
    Error::plain(format!(
        "{feature}: not supported yet in `lift build`; run the program with `lift run`"
    ))
}

/// The C prefix: the file's stem, which must be a C identifier.
fn library_name(path: &Path) -> Result<String, Error> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let ok = stem.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(stem.to_string())
    } else {
        Err(Error::plain(format!(
            "the library is named after the file, but `{stem}` is not a C identifier: rename {}",
            path.display()
        )))
    }
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|e| Error::plain(format!("cannot write {}: {e}", path.display())))
}

/// Runs the C compiler on the generated source.
fn cc(c: &Path, library: &Path, dir: &Path) -> Result<(), Error> {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    // The compiler runs in `dir`, so a relative `-o build` must not be read from there again.
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let out = std::process::Command::new(&compiler)
        // -O1: the host code is straight-line calls into OpenCL, which -O2 does not make faster,
        // but it took a third of a suite program's build (bench/results/library-build-time-2026-12-02.md).
        .args(["-std=c99", "-shared", "-fPIC", "-O1", "-Wall", "-o"])
        .arg(absolute(library))
        .arg(absolute(c))
        // The loader by its soname: the unversioned `libOpenCL.so` comes only with the headers'
        // development package, which the library does not need.
        .args(["-l:libOpenCL.so.1", "-lpthread"])
        .current_dir(dir)
        .output()
        .map_err(|e| Error::plain(format!("cannot run the C compiler `{compiler}`: {e}")))?;
    if !out.status.success() {
        return Err(Error::Plain {
            message: format!("the C compiler `{compiler}` failed on {}", c.display()),
            notes: vec![String::from_utf8_lossy(&out.stderr).into_owned()],
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::library_name;
    use std::path::Path;

    #[test]
    fn the_library_is_named_after_a_file_whose_stem_is_a_c_identifier() {
        assert_eq!(
            library_name(Path::new("dir/hl_matvec.lisp")).ok().as_deref(),
            Some("hl_matvec")
        );
        for bad in ["hl-matvec.lisp", "2mm.lisp", ".lisp"] {
            let e = library_name(Path::new(bad)).err().map(|e| e.message());
            assert!(e.is_some_and(|m| m.contains("not a C identifier")), "{bad}");
        }
    }
}
