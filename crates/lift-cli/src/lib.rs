//! The `lift` command line: thin argument handling around the library crates' calls
//! (`lift_compile`, `lift_runtime`, `lift_devices`, `lift_tune`). The `lift` binary of package
//! `lift` is [`main`].

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "lift", version, about = "A compiler for the LIFT data-parallel IR to OpenCL")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Type-check a program and print its type.
    Check { program: PathBuf },
    /// Compile a program: OpenCL kernels and launch plan, or an intermediate form.
    Compile {
        program: PathBuf,
        /// Without it: the kernels followed by the launch plan (as a comment).
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// Write to this file instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Work-group size of `mapGlb` kernels (a tuning parameter): `128`, or per dimension `16x16`.
        #[arg(long, value_parser = parse_work_group)]
        work_group: Option<WorkGroup>,
        /// With `--emit plan`: how the program is split over these devices (`gpus`, `all` or
        /// comma-separated `P:D`).
        #[arg(long)]
        devices: Option<String>,
        /// A size's value (`F=34`; may be repeated), as `lift run`, `bench` and `tune` take it:
        /// the kernels are built with it known (they then serve that value only) and the variant
        /// is the one for these sizes; with `--devices`, the sizes at which each device's share
        /// is shown.
        #[arg(long, visible_alias = "known-size", value_name = "NAME=VALUE", value_parser = size_arg)]
        size: Vec<String>,
        /// With `--size`: compile as `lift run`/`bench` would on this device (`P:D`): a
        /// high-level program as its tuned configuration there, when the tuning cache has one
        /// for these sizes (its sizes built in, or as kernel arguments where `lift tune` found
        /// that faster), within the device's work-group limits.
        #[arg(long, requires = "size", conflicts_with = "devices")]
        device: Option<String>,
        /// With `--emit plan`: how the program is split over R MPI ranks (`lift run --mpi`), what
        /// is scattered, broadcast, gathered and exchanged between a loop's steps; no MPI needed.
        #[arg(long, value_name = "R", conflicts_with_all = ["devices", "device"])]
        mpi: Option<usize>,
    },
    /// Compile and run a program on its inputs; print the result as JSON.
    Run {
        program: PathBuf,
        /// `in.json` (object keyed by parameter name) or `param=file.npy`; may be repeated.
        #[arg(long)]
        data: Vec<String>,
        /// Give or check a size variable: `N=1024`; may be repeated.
        #[arg(long, value_parser = size_arg)]
        size: Vec<String>,
        /// Where to run: an OpenCL device, or the reference interpreter. Without it, OpenCL,
        /// unless the machine has no OpenCL platform: then the interpreter, said on stderr.
        #[arg(long, value_enum)]
        backend: Option<Backend>,
        /// OpenCL device: `P:D` from `lift devices`, or part of its name.
        #[arg(long)]
        device: Option<String>,
        /// Write the result to `out.json` or `out.npy` instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Report each kernel's time from profiling events (on stderr).
        #[arg(long)]
        time: bool,
        /// Split the outermost parallel map over several devices: `gpus`, `all`, or
        /// comma-separated `P:D` (a device named twice gets two contexts).
        #[arg(long, conflicts_with = "device")]
        devices: Option<String>,
        /// Arithmetic of products summed in reductions: `f32` (IEEE single precision) or `tf32`
        /// (operands rounded to TF32, sums in f32, on tensor cores; refused on a device without
        /// them).
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        /// One process per MPI rank (`mpirun -n R lift ... --mpi`), each on its own device
        /// (`--device`/`--devices` choose among its host's; by default local rank r takes device
        /// r mod their count): the outermost parallel map split over the ranks. Needs lift built
        /// with the cargo feature `mpi`.
        #[arg(long, conflicts_with = "backend")]
        mpi: bool,
    },
    /// A program for an application: a C header and a shared library.
    Build {
        program: PathBuf,
        /// The folder for `<prog>.h` and `lib<prog>.so`.
        #[arg(short, long)]
        output: PathBuf,
        /// Sizes to build kernels for (`N=1024`, repeated for each size); other sizes run the
        /// library's generic kernels. Without any, only those.
        #[arg(long, value_parser = size_arg)]
        size: Vec<String>,
        /// The device whose tuned variant and work-group limits the kernels take (`P:D`).
        #[arg(long)]
        device: Option<String>,
        /// Arithmetic of products summed in reductions: `f32` (IEEE single precision) or `tf32`
        /// (operands rounded to TF32, sums in f32, on tensor cores; refused on a device without
        /// them).
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
    },
    /// List OpenCL platforms and devices.
    Devices,
    /// Rewrite exploration: the distinct low-level variants, their estimated cost, e-graph statistics.
    Explore {
        program: PathBuf,
        /// Known sizes (decide divisibility and weigh the cost model), e.g. `N=1024`.
        #[arg(long, value_parser = size_arg)]
        size: Vec<String>,
        #[arg(long, default_value_t = 8)]
        top: usize,
    },
    /// Autotuning: run the variants on devices with random data, rank them, cache the best.
    Tune {
        program: PathBuf,
        #[arg(long, value_parser = size_arg)]
        size: Vec<String>,
        /// `all` or comma-separated `P:D` ids.
        #[arg(long, default_value = "all")]
        devices: String,
        /// Variants of the cost model timed first, in its order (without `--budget`: the only ones).
        #[arg(long, default_value_t = 8)]
        top: usize,
        /// Timings per configuration (with `--budget`: for the leaders, re-timed at the end).
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        /// Search variants × `mapGlb` work-group sizes within this time (`60s`, `2m`, `90`):
        /// the cost model's order first, then mutations of the best.
        #[arg(long, value_parser = parse_budget)]
        budget: Option<std::time::Duration>,
        /// Seed of the search's random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Draw the sweep (time of every configuration in the order tried) as SVG.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Most interpreter steps spent checking one variant's result (0: check nothing); a
        /// variant beyond it is reported as unchecked.
        #[arg(long, default_value_t = lift_tune::CHECK_STEPS)]
        check_steps: u64,
        /// CSV table, or JSON when the name ends in `.json`.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Arithmetic of products summed in reductions: `f32` (IEEE single precision) or `tf32`
        /// (operands rounded to TF32, sums in f32, on tensor cores; refused on a device without
        /// them).
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
    },
    /// Time a program on random inputs next to a device copy of its input bytes.
    Bench {
        program: PathBuf,
        /// Sizes, e.g. `N=100000000`; may be repeated.
        #[arg(long, value_parser = size_arg)]
        size: Vec<String>,
        #[arg(long)]
        device: Option<String>,
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Also compare the timed result with the reference interpreter.
        #[arg(long)]
        check: bool,
        /// Before timing, run the same variant at these sizes (`K=V`, may be repeated) and
        /// compare it with the interpreter within float32 error bounds.
        #[arg(long, value_parser = size_arg)]
        check_size: Vec<String>,
        /// Time a high-level program as written (its default lowering), not as its tuned or
        /// cost-model variant.
        #[arg(long)]
        as_written: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Split over these devices (`gpus`, `all` or `P:D,P:D`) and time each phase of each
        /// device, next to the first device alone in the same invocation.
        #[arg(long, conflicts_with_all = ["device", "as_written"])]
        devices: Option<String>,
        /// Arithmetic of products summed in reductions: `f32` (IEEE single precision) or `tf32`
        /// (operands rounded to TF32, sums in f32, on tensor cores; refused on a device without
        /// them).
        #[arg(long, value_enum, default_value = "f32")]
        precision: Precision,
        /// One process per MPI rank (`mpirun -n R lift bench ... --mpi`): the one-process time on
        /// rank 0's device beside the run split over every rank, each on its own device
        /// (as `lift run --mpi`). Needs lift built with the cargo feature `mpi`.
        #[arg(long)]
        mpi: bool,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Precision {
    F32,
    Tf32,
}

impl Precision {
    fn ir(self) -> ir::Precision {
        match self {
            Precision::F32 => ir::Precision::F32,
            Precision::Tf32 => ir::Precision::Tf32,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    Cl,
    Types,
    Views,
    Plan,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Backend {
    Opencl,
    Interp,
}

/// Options that LANGUAGE.md names and the compiler does not implement yet: each is one clear
/// error (exit 1) rather than a usage error or a silent fallback.
fn refuse_unsupported(command: &Command) -> Result<(), Failure> {
    let (split, mpi) = match command {
        Command::Run {
            precision,
            mpi,
            devices,
            backend,
            ..
        } => (
            *precision == Precision::Tf32 && (devices.is_some() || *mpi) && *backend != Some(Backend::Interp),
            *mpi,
        ),
        Command::Bench {
            precision,
            mpi,
            devices,
            ..
        } => (*precision == Precision::Tf32 && (devices.is_some() || *mpi), *mpi),
        Command::Tune { .. }
        | Command::Build { .. }
        | Command::Check { .. }
        | Command::Compile { .. }
        | Command::Devices
        | Command::Explore { .. } => (false, false),
    };
    if split {
        return Err(not_supported_yet(
            "`--precision tf32` with `--devices` or `--mpi` is not supported yet: run on one device (`--device`)",
        ));
    }
    if mpi && !cfg!(feature = "mpi") {
        return Err(not_supported_yet(
            "`--mpi` is not supported yet in this build of lift: it was built without its cargo \
             feature `mpi` (`cargo build --release --features mpi` needs an MPI such as OpenMPI, \
             and libclang)",
        ));
    }
    Ok(())
}

fn not_supported_yet(message: &str) -> Failure {
    Failure::User(lift_compile::report::render_plain(message, &[]))
}

/// `lift run`'s backend when none is given: OpenCL, or the reference interpreter on a machine
/// without any OpenCL platform or device, so that a newcomer's first run gives the result (and
/// one line on how to get OpenCL) instead of only an error. Any other OpenCL failure is left to
/// the run, which reports it.
fn default_backend() -> Result<Backend, Failure> {
    let why = match host_runner::devices() {
        Err(host_runner::Error::NoPlatform(why)) => format!("no OpenCL platform found ({why})"),
        Ok(devices) if devices.is_empty() => "no OpenCL device found".to_string(),
        Ok(_) | Err(_) => return Ok(Backend::Opencl),
    };
    err_out(&format!(
        "lift: {why}; running on the reference interpreter instead (for OpenCL install PoCL, on \
         Debian `apt-get install pocl-opencl-icd ocl-icd-libopencl1`, or a GPU driver; \
         `--backend opencl` makes this an error)\n"
    ))?;
    Ok(Backend::Interp)
}

/// A `--size`/`--check-size` value that is no `NAME=VALUE` pair of an integer is a usage error
/// (exit 2, from clap, like any malformed flag), not an error of the program.
fn size_arg(s: &str) -> Result<String, String> {
    let sizes = lift_compile::parse_sizes(&[s.to_string()]).map_err(|e| e.message())?;
    if sizes.iter().any(|(k, _)| k.is_empty()) {
        return Err(format!("--size {s}: expected NAME=VALUE, e.g. N=1024"));
    }
    Ok(s.to_string())
}

/// Stack of the thread that runs a command: the reader bounds nesting (`ir::MAX_DEPTH`), and
/// every recursive pass (typing, interpreter, rewriting, code generation, printers) fits in it
/// for a program at that bound.
const STACK_BYTES: usize = ir::STACK_BYTES;

/// The `lift` command: parses the arguments, runs the command on a thread with a deep stack, and
/// maps its outcome to the exit code (2: usage, 1: any other error).
pub fn main() -> ExitCode {
    // Usage errors exit with 2 (clap's convention), before anything else runs.
    let cli = Cli::parse();
    // The interpreter has no devices to split over: a flag it would silently ignore is a misuse.
    if let Command::Run {
        backend: Some(Backend::Interp),
        devices: Some(_),
        ..
    } = &cli.command
    {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--devices splits a run over OpenCL devices; it does not go with --backend interp",
            )
            .exit();
    }
    let worker = std::thread::Builder::new()
        .name("lift".into())
        .stack_size(STACK_BYTES)
        .spawn(move || run(cli));
    let outcome = match worker {
        Ok(handle) => handle.join(),
        Err(e) => Ok(Err(Failure::User(lift_compile::report::render_plain(
            &format!("cannot start the compiler thread: {e}"),
            &[],
        )))),
    };
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure::User(msg))) => {
            let _ = std::io::stderr().write_all(msg.as_bytes());
            ExitCode::FAILURE
        }
        Ok(Err(Failure::Usage(msg))) => {
            let _ = std::io::stderr().write_all(msg.as_bytes());
            ExitCode::from(2)
        }
        // The panic message is already on stderr; a bug still exits like any other error
        // rather than with Rust's 101.
        Err(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: internal error in lift (a bug): please report it with the program"
            );
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout or stderr. A reader that stops early (`lift run ... | head -c 1`) closes
/// the pipe: like `cat`, the command then ends quietly with what was already written.
fn emit(mut to: impl Write, text: &str) -> Result<(), Failure> {
    match to.write_all(text.as_bytes()).and_then(|()| to.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(Failure::User(lift_compile::report::render_plain(
            &format!("cannot write the output: {e}"),
            &[],
        ))),
    }
}

fn to_stdout(text: &str) -> Result<(), Failure> {
    emit(std::io::stdout().lock(), text)
}

fn err_out(text: &str) -> Result<(), Failure> {
    emit(std::io::stderr().lock(), text)
}

fn read_program(path: &PathBuf) -> Result<(String, String), String> {
    let name = path.display().to_string();
    std::fs::read_to_string(path)
        .map(|src| (name.clone(), src))
        .map_err(|e| lift_compile::report::render_plain(&format!("cannot read {name}: {e}"), &[]))
}

/// How a command fails: an error of the program or its data (exit 1), or of the command line
/// (exit 2, as clap's own usage errors) found only once the program is read.
enum Failure {
    User(String),
    Usage(String),
}

impl From<String> for Failure {
    fn from(msg: String) -> Failure {
        Failure::User(msg)
    }
}

/// A `--size` (or `--check-size`) naming no size variable of the program is a mistake on the
/// command line, the same for every command: `explore` and `tune` would otherwise ignore it and
/// report on sizes the user did not mean. A program that does not read is left to the command,
/// which reports it with its place.
fn check_size_names(src: &str, flag: &str, sizes: &[String]) -> Result<(), Failure> {
    let Ok(prog) = ir::parse(src) else { return Ok(()) };
    let Ok(given) = lift_compile::parse_sizes(sizes) else {
        return Ok(());
    };
    for (name, v) in given {
        if prog.sizes.contains(&name) {
            continue;
        }
        let mut notes = vec![];
        if let Some(c) = ir::diag::closest(&name, prog.sizes.iter().map(String::as_str)) {
            notes.push(format!("did you mean `{c}`?"));
        }
        let list = if prog.sizes.is_empty() {
            "none".to_string()
        } else {
            prog.sizes.join(", ")
        };
        notes.push(format!("its size variables are: {list}"));
        return Err(Failure::Usage(lift_compile::report::render_plain(
            &format!("{flag} {name}={v}: the program has no size variable `{name}`"),
            &notes,
        )));
    }
    Ok(())
}

/// The format of `lift run -o`, from the file's extension (LANGUAGE.md: `out.json|out.npy`); any
/// other name is a usage error rather than JSON under a name that promises something else.
#[derive(Clone, Copy, PartialEq, Debug)]
enum OutFormat {
    Json,
    Npy,
}

fn out_format(path: &std::path::Path) -> Result<OutFormat, Failure> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Ok(OutFormat::Json),
        Some("npy") => Ok(OutFormat::Npy),
        _ => Err(Failure::Usage(lift_compile::report::render_plain(
            &format!(
                "-o {}: the result is written as JSON (`.json`) or numpy (`.npy`); name the file with one of these extensions",
                path.display()
            ),
            &[],
        ))),
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    refuse_unsupported(&cli.command)?;
    match cli.command {
        Command::Check { program } => {
            let (name, src) = read_program(&program)?;
            let opts = lift_compile::Options::types_only();
            let c = lift_compile::compile(&src, &opts).map_err(|e| e.render(&name, &src))?;
            to_stdout(&format!("{}\n", lift_compile::signature(&c.given, &c.given_info)))
        }
        Command::Compile {
            program,
            emit,
            output,
            work_group,
            devices,
            size,
            device,
            mpi,
        } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            if let Some(ranks) = mpi {
                if !matches!(emit, Some(Emit::Plan)) {
                    return Err(Failure::Usage(lift_compile::report::render_plain(
                        "--mpi goes with --emit plan",
                        &[],
                    )));
                }
                let text = lift_devices::ranks::describe(&src, ranks, &size).map_err(|e| e.render(&name, &src))?;
                return write_out(output.as_ref(), &text);
            }
            let known: std::collections::BTreeMap<String, i64> = lift_compile::parse_sizes(&size)
                .map_err(|e| e.render(&name, &src))?
                .into_iter()
                .collect();
            if let Some(spec) = devices {
                if !matches!(emit, Some(Emit::Plan)) {
                    return Err(Failure::Usage(lift_compile::report::render_plain(
                        "--devices goes with --emit plan",
                        &[],
                    )));
                }
                let text = lift_devices::resolve(&spec)
                    .and_then(|devs| lift_devices::describe(&src, &devs, &size))
                    .map_err(|e| e.render(&name, &src))?;
                return write_out(output.as_ref(), &text);
            }
            let emit = emit.map(|e| match e {
                Emit::Cl => lift_compile::Emit::Cl,
                Emit::Types => lift_compile::Emit::Types,
                Emit::Views => lift_compile::Emit::Views,
                Emit::Plan => lift_compile::Emit::Plan,
            });
            let device = match &device {
                Some(d) => Some(
                    host_runner::device_info(Some(d))
                        .map_err(|e| lift_compile::report::render_plain(&e.to_string(), &[]))?,
                ),
                None => None,
            };
            let opts = lift_compile::Options {
                types_only: emit == Some(lift_compile::Emit::Types),
                work_group: work_group.map(|w| w.0).unwrap_or_default(),
                specialise: !known.is_empty(),
                tuned_for: device.as_ref().map(|d| d.name.clone()),
                work_group_limit: device.as_ref().map(lift_runtime::work_group_limit),
                sizes: known,
                ..lift_compile::Options::default()
            };
            let text = lift_compile::compile(&src, &opts)
                .and_then(|c| match emit {
                    None => Ok(format!(
                        "{}/* launch plan\n{}*/\n",
                        c.text(lift_compile::Emit::Cl)?,
                        c.text(lift_compile::Emit::Plan)?
                    )),
                    Some(emit) => c.text(emit),
                })
                .map_err(|e| e.render(&name, &src))?;
            write_out(output.as_ref(), &text)
        }
        Command::Run {
            program,
            data,
            size,
            backend,
            device,
            output,
            time,
            devices,
            precision,
            mpi,
        } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            let format = output.as_deref().map(out_format).transpose()?;
            #[cfg(feature = "mpi")]
            if mpi {
                let choice = mpi_choice(device, devices);
                return match lift_devices::ranks::run_files(&src, &data, &size, &choice, time) {
                    Ok(lift_devices::ranks::Outcome::Root(result)) => print_result(&result, output, format),
                    Ok(lift_devices::ranks::Outcome::Report(text)) => to_stdout(&text),
                    Ok(lift_devices::ranks::Outcome::Other { ok }) => other_rank(ok),
                    Err(e) => Err(e.render(&name, &src).into()),
                };
            }
            // (refused before, in a build without MPI)
            let _ = mpi;
            let backend = match backend {
                Some(b) => b,
                None if devices.is_none() => default_backend()?,
                None => Backend::Opencl,
            };
            let result = match devices {
                Some(spec) if backend == Backend::Opencl => lift_devices::resolve(&spec)
                    .and_then(|devs| lift_devices::run_files(&src, &data, &size, &devs, time)),
                _ => {
                    let opts = lift_runtime::RunOptions {
                        device,
                        time,
                        interp: backend == Backend::Interp,
                    };
                    lift_runtime::run_files_at(&src, &data, &size, &opts, precision.ir())
                }
            }
            .map_err(|e| e.render(&name, &src))?;
            print_result(&result, output, format)
        }
        Command::Bench {
            program,
            size,
            device,
            repeats,
            check,
            check_size,
            as_written,
            json,
            devices,
            precision,
            mpi,
        } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            check_size_names(&src, "--check-size", &check_size)?;
            #[cfg(feature = "mpi")]
            if mpi {
                let choice = mpi_choice(device, devices);
                return match lift_devices::ranks::bench(&src, &size, repeats, &choice) {
                    Ok(lift_devices::ranks::Outcome::Report(text)) => to_stdout(&text),
                    Ok(lift_devices::ranks::Outcome::Root(result)) => to_stdout(&format!("{}\n", result.json)),
                    Ok(lift_devices::ranks::Outcome::Other { ok }) => other_rank(ok),
                    Err(e) => Err(e.render(&name, &src).into()),
                };
            }
            // (refused before, in a build without MPI)
            let _ = mpi;
            let opts = lift_tune::bench::BenchOptions {
                device,
                repeats,
                check,
                check_sizes: check_size,
                as_written,
                devices,
                precision: precision.ir(),
            };
            if opts.devices.is_some() {
                let report = lift_tune::bench::bench_devices(&src, &size, &opts).map_err(|e| e.render(&name, &src))?;
                return to_stdout(&if json { report.json(&name) } else { report.text() });
            }
            let report = lift_tune::bench::bench(&src, &size, &opts).map_err(|e| e.render(&name, &src))?;
            to_stdout(&if json { report.json(&name) } else { report.text() })
        }
        Command::Explore { program, size, top } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            let sizes: std::collections::BTreeMap<String, i64> = lift_compile::parse_sizes(&size)
                .map_err(|e| e.render(&name, &src))?
                .into_iter()
                .collect();
            // With sizes, the variants are validated with them built in, as `lift tune`
            // measures them: the list is the one tune searches.
            let opts = rewrite::Options {
                built_in: sizes.clone(),
                sizes,
                top_k: top,
                ..rewrite::Options::default()
            };
            let report = lift_tune::explore_text(&src, &opts).map_err(|e| e.render(&name, &src))?;
            to_stdout(&report)
        }
        Command::Tune {
            program,
            size,
            devices,
            top,
            repeats,
            budget,
            seed,
            plot,
            check_steps,
            out,
            precision,
        } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            let devs: Vec<String> = devices.split(',').map(str::to_string).collect();
            let opts = lift_tune::TuneOptions {
                top_k: top,
                repeats,
                check_steps,
                budget,
                seed,
                out,
                plot,
                precision: precision.ir(),
            };
            let report = lift_tune::tune_with(&src, &size, &devs, &opts).map_err(|e| e.render(&name, &src))?;
            to_stdout(&report)
        }
        Command::Build {
            program,
            output,
            size,
            device,
            precision,
        } => {
            let (name, src) = read_program(&program)?;
            check_size_names(&src, "--size", &size)?;
            let sizes: std::collections::BTreeMap<String, i64> = lift_compile::parse_sizes(&size)
                .map_err(|e| e.render(&name, &src))?
                .into_iter()
                .collect();
            let built = lift_build::build(&program, &src, &sizes, device.as_deref(), &output, precision.ir())
                .map_err(|e| e.render(&name, &src))?;
            to_stdout(&format!("{}\n{}\n", built.header.display(), built.library.display()))
        }
        Command::Devices => {
            let devs = host_runner::devices().map_err(|e| lift_compile::report::render_plain(&e.to_string(), &[]))?;
            to_stdout(&host_runner::describe_devices(&devs))
        }
    }
}

/// The result of `lift run` on stdout or in `-o`'s file, its timing report on stderr.
fn print_result(
    result: &lift_runtime::RunResult,
    output: Option<PathBuf>,
    format: Option<OutFormat>,
) -> Result<(), Failure> {
    if let Some(report) = &result.timing {
        err_out(report)?;
    }
    match (output, format) {
        (Some(path), Some(OutFormat::Npy)) => Ok(std::fs::write(&path, &result.npy()?)
            .map_err(|e| lift_compile::report::render_plain(&format!("cannot write {}: {e}", path.display()), &[]))?),
        (other, _) => write_out(other.as_ref(), &format!("{}\n", result.json)),
    }
}

/// `--device` / `--devices` of an MPI run: which of its host's devices each rank takes.
#[cfg(feature = "mpi")]
fn mpi_choice(device: Option<String>, devices: Option<String>) -> lift_devices::ranks::Choice {
    match (device, devices) {
        (Some(d), _) => lift_devices::ranks::Choice::Device(d),
        (None, Some(spec)) => lift_devices::ranks::Choice::Devices(spec),
        (None, None) => lift_devices::ranks::Choice::Default,
    }
}

/// A rank other than 0 prints nothing: rank 0 prints the result, or the one error naming the
/// rank that failed. It fails quietly where the run failed, so `mpirun` fails too.
#[cfg(feature = "mpi")]
fn other_rank(ok: bool) -> Result<(), Failure> {
    if ok {
        Ok(())
    } else {
        Err(Failure::User(String::new()))
    }
}

/// `--budget`: seconds, with an optional unit (`500ms`, `30s`, `2m`).
fn parse_budget(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(|x| std::time::Duration::try_from_secs_f64(x * scale).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`{text}`: expected a positive time such as `60s`, `2m` or `500ms`"))
}

/// A work-group size per dimension (one value for clap, not a list of arguments).
#[derive(Clone)]
struct WorkGroup(Vec<usize>);

/// `--work-group`: `128`, or sizes per dimension `16x16` (or `16,16`), each at least 1.
fn parse_work_group(text: &str) -> Result<WorkGroup, String> {
    let sizes: Option<Vec<usize>> = text
        .split(['x', ',', '×'])
        .map(|p| p.trim().parse::<usize>().ok().filter(|x| (1..=1 << 20).contains(x)))
        .collect();
    sizes
        .filter(|s| !s.is_empty() && s.len() <= 3)
        .map(WorkGroup)
        .ok_or_else(|| format!("`{text}`: expected a work-group size such as `128` or `16x16`"))
}

fn write_out(path: Option<&PathBuf>, text: &str) -> Result<(), Failure> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| {
            Failure::User(lift_compile::report::render_plain(
                &format!("cannot write {}: {e}", p.display()),
                &[],
            ))
        }),
        None => to_stdout(text),
    }
}
