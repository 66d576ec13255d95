//! `lift build`: a compiled program as a C library, `DIR/<prog>.h` and `DIR/lib<prog>.so`.
//!
//! The library is generated C alone. [`gen`] writes one C file: the hand-written runtime
//! (`runtime.c`: OpenCL declarations, the context with its lock and last error, device arrays),
//! the kernels' OpenCL C as a string literal, and the launch plan as straight-line C, every size
//! a constant of the sizes the program was built for (`--size`); the header declares the API.
//! The system C compiler (`$CC`, else `cc`) then builds the `.so`, which needs only the OpenCL
//! ICD loader (`libOpenCL.so.1`) and libc: building it needs no OpenCL headers.
//!
//! What a library can hold today: a program whose plan is a sequence of kernel launches on one
//! device, with arrays of scalars as parameters and result. Host sections, filters and tuple
//! arrays are refused before anything is written.

mod gen;

use lift_compile::{compile, Error, Options};
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
    let given = compile(source, &Options::types_only())?.given;
    // The kernels are built for fixed sizes: a library for symbolic sizes would need the plan's
    // lengths as C expressions, which the runtime does not yet take apart.
    let missing: Vec<&str> = given
        .sizes
        .iter()
        .filter(|s| !sizes.contains_key(*s))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let example: Vec<String> = missing.iter().map(|s| format!("--size {s}=…")).collect();
        return Err(Error::plain(format!(
            "`lift build` makes a library for fixed sizes: give {}",
            example.join(" ")
        )));
    }
    // Without a device the plan is still generated (the cost model's variant, the common
    // work-group limits); the library then runs on whatever device its user opens.
    let info = host_runner::device_info(device).ok();
    if device.is_some() && info.is_none() {
        let e = host_runner::device_info(device)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err(Error::plain(e));
    }
    let mut opts = lift_runtime::run_options(&given, sizes, info.as_ref());
    opts.specialise = true;
    // `tf32` is for the device the library is built on: refused where it has no tensor cores
    let opts = lift_runtime::with_precision(opts, precision, info.as_ref())?;
    let compiled = compile(source, &opts)?;
    if compiled.host.is_some() {
        return Err(not_supported("host sections (`iterate`, `iterate-until`, a host `if`)"));
    }
    let plan = compiled
        .plan
        .as_ref()
        .ok_or_else(|| Error::plain("internal: a compiled program without kernels"))?;
    // A library says which variant it holds, as `lift run --time` would.
    let chosen = match &compiled.variant {
        Some(v) if v.tuned => format!(
            "the variant `lift tune` found fastest on {}: {}",
            info.as_ref().map_or("the device", |d| d.name.as_str()),
            v.description.lines().next().unwrap_or_default()
        ),
        Some(v) => format!(
            "the cost model's best variant: {}",
            v.description.lines().next().unwrap_or_default()
        ),
        None => "the program as written".to_string(),
    };
    let lib = gen::generate(&name, &compiled.program, plan, sizes, &chosen)?;
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
    let out = std::process::Command::new(&compiler)
        .args(["-std=c99", "-shared", "-fPIC", "-O2", "-Wall", "-o"])
        .arg(library)
        .arg(c)
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
