//! Running one program over MPI ranks: rank 0 reads the data and decides (the `--devices`
//! planner), tells the others what to run, scatters the sliced inputs and broadcasts the whole
//! ones; every rank compiles its slice program for its own device and runs it; the parts come
//! back to rank 0 in rank order. A host loop stays resident on every rank's device, and between
//! steps each rank receives only what its next step reads ([`super::state_reads`]). Every
//! phase ends with an agreement on failures, so a failing rank stops every rank, and rank 0
//! reports it once, naming the rank and its device.
//!
//! The ranks other than 0 serve: they wait for rank 0's next job (a run, or the end) and take
//! part in it, so `lift run` (one job) and `lift bench` (one-process timings on rank 0, then
//! several jobs) share one protocol.

use super::transport::Comm;
use super::wire;
use crate::decide::*;
use crate::run::*;
use crate::shares::*;
use crate::*;
use ir::interp::Value;
use lift_compile::{Error, Options};
use lift_data::Inputs;
use lift_runtime::RunResult;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Instant;

/// Which local device a rank takes.
#[derive(Clone, Debug)]
pub enum Choice {
    /// Its host's GPU `local rank mod count`, or device `local rank mod count` where the host
    /// has no GPU.
    Default,
    /// This device (`--device`), on every rank.
    Device(String),
    /// `--devices`' list: item `local rank mod its length`.
    Devices(String),
}

/// How a rank's part of a run ended.
pub enum Outcome {
    /// Rank 0's result of `lift run`.
    Root(RunResult),
    /// Rank 0's report of `lift bench`.
    Report(String),
    /// Another rank: it took part; `ok` false where the run failed (the error is rank 0's to
    /// print).
    Other { ok: bool },
}

/// What rank 0 sends before each job.
enum Job {
    /// With `time`, every rank's timing lines go to rank 0.
    Run {
        src: String,
        sizes: BTreeMap<String, i64>,
        time: bool,
    },
    Stop {
        ok: bool,
    },
    /// Every rank's CPU time so far to rank 0 (`lift bench`).
    Cpu,
}

impl Job {
    fn bytes(&self) -> Vec<u8> {
        let v = match self {
            Job::Run { src, sizes, time } => serde_json::json!({ "run": src, "sizes": sizes, "time": time }),
            Job::Stop { ok } => serde_json::json!({ "stop": ok }),
            Job::Cpu => serde_json::json!({ "cpu": true }),
        };
        v.to_string().into_bytes()
    }

    fn read(b: &[u8]) -> Result<Job, Error> {
        let bad = || Error::plain("internal: a malformed job from rank 0");
        let v: serde_json::Value = serde_json::from_slice(b).map_err(|_| bad())?;
        if let Some(ok) = v.get("stop").and_then(|x| x.as_bool()) {
            return Ok(Job::Stop { ok });
        }
        if v.get("cpu").is_some() {
            return Ok(Job::Cpu);
        }
        let src = v.get("run").and_then(|x| x.as_str()).ok_or_else(bad)?.to_string();
        let sizes = v
            .get("sizes")
            .and_then(|x| x.as_object())
            .ok_or_else(bad)?
            .iter()
            .map(|(k, n)| n.as_i64().map(|n| (k.clone(), n)).ok_or_else(bad))
            .collect::<Result<_, _>>()?;
        let time = v.get("time").and_then(|x| x.as_bool()).ok_or_else(bad)?;
        Ok(Job::Run { src, sizes, time })
    }
}

/// Variables that MPI launchers set in the processes they start (OpenMPI's mpirun, PMI of
/// MPICH's Hydra and Slurm, PMIx).
const LAUNCHED: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"];

/// Starts MPI, picks this rank's device and learns every rank's; the device, or (on every
/// rank) the error of the ranks that could not have theirs.
fn start(choice: &Choice) -> Result<(mpi::environment::Universe, Comm, Result<String, Error>), Error> {
    // A process not started by a launcher would start MPI alone (a "singleton"), which
    // OpenMPI fails at with a message of its own: say what to do instead.
    if !LAUNCHED.iter().any(|v| std::env::var_os(v).is_some()) {
        return Err(Error::plain(
            "--mpi: this process was not started by an MPI launcher; run one process per rank with \
             `mpirun -n R lift run … --mpi` (or srun)",
        ));
    }
    let universe = mpi::initialize().ok_or_else(|| Error::plain("--mpi: MPI was initialised already"))?;
    let mut comm = Comm::new(universe.world());
    let (label, picked) = match pick(choice, comm.local_rank) {
        Ok((id, name)) => (format!("{id}, {name}"), Ok(id)),
        Err((id, e)) => (id, Err(e)),
    };
    comm.devices = comm
        .all_gather(label.as_bytes())?
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let device = comm.agree(picked);
    Ok((universe, comm, device))
}

/// This rank's device: its id and name, or what it was asked for and why it cannot have it.
fn pick(choice: &Choice, local: usize) -> Result<(String, String), (String, Error)> {
    let id = match choice {
        Choice::Device(d) => d.clone(),
        Choice::Devices(spec) => {
            let ids = resolve(spec).map_err(|e| (spec.clone(), e))?;
            ids[local % ids.len()].clone()
        }
        Choice::Default => {
            let devs = host_runner::devices().map_err(|e| ("?".to_string(), Error::plain(e.to_string())))?;
            let gpus: Vec<&String> = devs
                .iter()
                .filter(|d| d.kind == host_runner::DeviceKind::Gpu)
                .map(|d| &d.id)
                .collect();
            let pool: Vec<&String> = if gpus.is_empty() {
                devs.iter().map(|d| &d.id).collect()
            } else {
                gpus
            };
            if pool.is_empty() {
                return Err(("?".into(), Error::plain("no OpenCL device found (see `lift devices`)")));
            }
            pool[local % pool.len()].clone()
        }
    };
    match host_runner::device_info(Some(&id)) {
        Ok(info) => Ok((id, info.name)),
        Err(e) => Err((id, Error::plain(e.to_string()))),
    }
}

/// `mpirun -n R lift run prog.lisp --data in.json --mpi`: rank 0 loads the inputs as `lift run`
/// does; its [`Outcome::Root`] is the result.
pub fn run_files(src: &str, data: &[String], sizes: &[String], choice: &Choice, time: bool) -> Result<Outcome, Error> {
    with_ranks(choice, |comm, device| root_run(comm, device, src, data, sizes, time))
}

/// Rank 0's side of `lift run --mpi`.
fn root_run(
    comm: &Comm,
    device: &str,
    src: &str,
    data: &[String],
    sizes: &[String],
    time: bool,
) -> Result<Outcome, Error> {
    let loaded = (|| {
        let typed = lift_compile::compile(src, &Options::types_only())?;
        let sources = lift_runtime::read_sources(data)?;
        let given = lift_compile::parse_sizes(sizes)?;
        let inputs = lift_data::load(&typed.given, &sources, &given)?;
        lift_runtime::verify_checks(&typed.given_info, &inputs)?;
        Ok::<_, Error>((typed.given_info.result().clone(), inputs))
    })();
    let (ty, inputs) = match loaded {
        Ok(x) => x,
        Err(e) => {
            comm.polite_broadcast(Some(Job::Stop { ok: false }.bytes()));
            return Err(e);
        }
    };
    let outcome = job(comm, device, src, &inputs, time);
    comm.polite_broadcast(Some(Job::Stop { ok: outcome.is_ok() }.bytes()));
    let (value, timing) = outcome?;
    Ok(Outcome::Root(result(value.expect("rank 0 has the result"), ty, timing)))
}

/// `mpirun -n R lift bench prog.lisp --size … --mpi`: on random inputs, rank 0's device alone
/// (the one-process time, the other ranks idle), then the run over every rank, each `repeats`
/// times; the medians, their ratio, and whether the results agree.
pub fn bench(src: &str, sizes: &[String], repeats: usize, choice: &Choice) -> Result<Outcome, Error> {
    with_ranks(choice, |comm, device| root_bench(comm, device, src, sizes, repeats))
}

/// Starts MPI and this rank's device; rank 0 runs `root`, the others serve it. A panic (a bug)
/// aborts every rank (MPI_Abort) rather than leave them waiting in a collective.
fn with_ranks(choice: &Choice, root: impl FnOnce(&Comm, &str) -> Result<Outcome, Error>) -> Result<Outcome, Error> {
    let (_universe, comm, device) = start(choice)?;
    let device = match (device, comm.is_root()) {
        (Ok(d), _) => d,
        (Err(e), true) => return Err(e),
        (Err(_), false) => return Ok(Outcome::Other { ok: false }),
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if comm.is_root() {
            root(&comm, &device)
        } else {
            serve(&comm, &device)
        }
    }));
    outcome.unwrap_or_else(|_| comm.abort())
}

/// Rank 0's side of `lift bench --mpi`.
fn root_bench(comm: &Comm, device: &str, src: &str, sizes: &[String], repeats: usize) -> Result<Outcome, Error> {
    let report = (|| {
        let typed = lift_compile::compile(src, &Options::types_only())?;
        let given: BTreeMap<String, i64> = lift_compile::parse_sizes(sizes)?.into_iter().collect();
        let inputs = lift_data::random_inputs(&typed.given, &given, 42)?;
        lift_runtime::verify_checks(&typed.given_info, &inputs)?;
        let repeats = repeats.max(1);
        // One untimed run of each first: the kernels' builds are cached after it (PoCL's
        // cache, the driver's), as they are for the one-process run's program.
        run_on(src, &inputs, device, false).map_err(|e| comm.failed(vec![(0, e.message())]))?;
        job(comm, device, src, &inputs, false)?;
        // Interleaved (alone, over the ranks, alone, …), so that a change in the host's load
        // falls on both alike.
        let (mut alone, mut split) = (vec![], vec![]);
        let (mut want, mut got) = (None, None);
        let (mut cpu_alone, mut cpu_split) = (0.0, 0.0);
        for _ in 0..repeats {
            let cpu0 = cpu_ms();
            let t = Instant::now();
            let part = run_on(src, &inputs, device, false).map_err(|e| comm.failed(vec![(0, e.message())]))?;
            alone.push(t.elapsed().as_secs_f64() * 1e3);
            cpu_alone += cpu_ms() - cpu0;
            want = Some(part.value);
            let cpu1 = all_cpu(comm)?;
            let t = Instant::now();
            let (value, _) = job(comm, device, src, &inputs, false)?;
            split.push(t.elapsed().as_secs_f64() * 1e3);
            cpu_split += all_cpu(comm)? - cpu1;
            got = value;
        }
        let same = match (&want, &got) {
            (Some(w), Some(g)) => lift_runtime::values_close(w, g, 1e-4),
            _ => false,
        };
        if !same {
            return Err(Error::plain(format!(
                "the run over {} ranks differs from the one-process run on rank 0's device (beyond 1e-4)",
                comm.size
            )));
        }
        let (a, s) = (median(&mut alone), median(&mut split));
        Ok::<_, Error>(format!(
            "{} ranks ({}):\n  one process (rank 0's device alone, the others idle): {a:.1} ms\n  \
             {} ranks (scatter, slices, gather): {s:.1} ms\n  ratio: {:.3} (median of {repeats} whole runs each, interleaved, after one \
             untimed: compile, copies, kernels, transfers)\n  CPU time (every thread, the device's too where it is \
             the CPU): one process {:.0} ms, all ranks {:.0} ms per run (ratio {:.3}){}\n  results agree (within 1e-4)\n",
            comm.size,
            comm.devices.join("; "),
            comm.size,
            s / a,
            cpu_alone / repeats as f64,
            cpu_split / repeats as f64,
            cpu_split / cpu_alone.max(1e-9),
            load().map_or(String::new(), |l| format!("; load average {l}")),
        ))
    })();
    comm.polite_broadcast(Some(Job::Stop { ok: report.is_ok() }.bytes()));
    report.map(Outcome::Report)
}

/// This process's CPU time (user and system, every thread) in ms, from `/proc/self/stat`
/// (ticks of 1/100 s, Linux's `USER_HZ`); 0 where it cannot be read.
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // (fields after the command's closing parenthesis: utime and stime are the 12th and 13th)
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
    let tick = |i: usize| fields.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) * 10.0
}

/// Every rank's CPU time so far, summed (rank 0 asks, the others answer in `serve`).
fn all_cpu(comm: &Comm) -> Result<f64, Error> {
    comm.polite_broadcast(Some(Job::Cpu.bytes()));
    let all = comm.gather(&cpu_ms().to_le_bytes())?.unwrap_or_default();
    Ok(all
        .iter()
        .map(|b| b.as_slice().try_into().map_or(0.0, f64::from_le_bytes))
        .sum())
}

/// The host's load average over the last minute (Linux), for a report made on a shared machine.
fn load() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_string)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// A rank other than 0: takes part in rank 0's jobs until it says stop.
fn serve(comm: &Comm, device: &str) -> Result<Outcome, Error> {
    let mut ok = true;
    loop {
        match Job::read(&comm.polite_broadcast(None))? {
            Job::Stop { ok: all } => return Ok(Outcome::Other { ok: ok && all }),
            Job::Cpu => {
                comm.gather(&cpu_ms().to_le_bytes())?;
            }
            Job::Run { src, sizes, time } => {
                let ins = Inputs { values: vec![], sizes };
                ok &= job_on(comm, device, &src, &ins, None, time).is_ok();
            }
        }
    }
}

/// One run over every rank (rank 0's side: it has the inputs and sends the job first).
fn job(
    comm: &Comm,
    device: &str,
    src: &str,
    inputs: &Inputs,
    time: bool,
) -> Result<(Option<Value>, Option<String>), Error> {
    comm.polite_broadcast(Some(
        Job::Run {
            src: src.to_string(),
            sizes: inputs.sizes.clone(),
            time,
        }
        .bytes(),
    ));
    job_on(
        comm,
        device,
        src,
        &Inputs {
            values: vec![],
            sizes: inputs.sizes.clone(),
        },
        Some(inputs),
        time,
    )
}

/// Every rank's side of one run: `given` is the inputs on rank 0 (`None` elsewhere); `at` has
/// the sizes on every rank.
fn job_on(
    comm: &Comm,
    device: &str,
    src: &str,
    at: &Inputs,
    given: Option<&Inputs>,
    time: bool,
) -> Result<(Option<Value>, Option<String>), Error> {
    let started = Instant::now();
    let typed = comm.agree(lift_compile::compile(src, &Options::types_only()))?;
    let out = match decide(&typed.given, &typed.given_info) {
        Decision::Split(split) => split_run(comm, device, src, &split, typed.given_info.result(), at, given)?,
        Decision::Whole(why) => match loop_of(&typed.given, &typed.given_info) {
            Some((hl, until)) => {
                let state_ty = typed.given.params[hl.init].ty.clone();
                let state = (typed.given.params.len(), &state_ty);
                super::steps::loop_run(comm, device, src, &hl, until.as_ref(), state, at, given)?
            }
            None => {
                // Rank 0 runs it whole; the others have nothing to do.
                let part = given.map(|ins| run_on(src, ins, device, time).map(|p| p.value));
                let value = comm.agree(part.transpose())?;
                let timing = time.then(|| format!("not split ({why}): rank 0 ran the whole program\n"));
                return Ok((value, timing));
            }
        },
    };
    let wall = started.elapsed();
    if !time {
        return Ok((out.0, None));
    }
    // Every rank's own lines, in rank order.
    let lines = comm.gather(out.1.as_bytes())?.map(|all| {
        let mut text: String = all.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
        text.push_str(&format!(
            "over {} ranks: {:.3} ms (wall on rank 0: decisions, transfers, compilation, kernels)\n",
            comm.size,
            wall.as_secs_f64() * 1e3
        ));
        text
    });
    Ok((out.0, lines))
}

/// The host loop at the top of a program: `iterate` whose step splits, or a convergence loop
/// whose step splits and whose test each rank can make on its own rows.
fn loop_of(prog: &ir::Program, info: &typeck::TypeInfo) -> Option<(HostLoop, Option<super::Until>)> {
    match host_loop(prog, info) {
        Some(hl) => Some((hl, None)),
        None => super::until_loop(prog, info).ok().map(|(hl, u)| (hl, Some(u))),
    }
}

/// The ranges of the split over the ranks: equal where every rank's device has one name, else
/// from each rank's estimate (a probe on random inputs at these sizes), chosen as `--devices`
/// chooses.
pub(super) fn ranges(
    comm: &Comm,
    probe: &Probe,
    split: &Split,
    at: &Inputs,
    device: &str,
) -> Result<Vec<Range<usize>>, Error> {
    let n = split_len(split, &at.sizes)?;
    let names: Vec<&str> = comm
        .devices
        .iter()
        .map(|d| d.split_once(", ").map_or(d.as_str(), |x| x.1))
        .collect();
    if names.iter().all(|d| *d == names[0]) {
        return Ok(slices(n, &vec![1.0; comm.size]));
    }
    let est = (|| {
        let typed = lift_compile::compile(probe.src, &Options::types_only())?;
        let mut ins = lift_data::random_inputs(&typed.given, &at.sizes, 42)?;
        // (a loop's step reads its state last)
        if let Some(init) = probe.init {
            ins.values.push(ins.values[init].clone());
        }
        let tuned = probe.init.is_none().then_some(probe.src);
        let e = estimate(tuned, split, &ins, device, n, false)?;
        Ok::<_, Error>(format!("{} {}", e.ns_per_elem, e.fixed_ms))
    })();
    let mine = comm.agree(est)?;
    let all = comm.all_gather(mine.as_bytes())?;
    let est: Vec<Estimate> = all
        .iter()
        .map(|b| {
            let t = String::from_utf8_lossy(b);
            let mut it = t.split(' ').map(|x| x.parse::<f64>().unwrap_or(0.0));
            Estimate {
                ns_per_elem: it.next().unwrap_or(0.0),
                fixed_ms: it.next().unwrap_or(0.0),
                from: "a probe on its rank".into(),
                settled: false,
            }
        })
        .collect();
    Ok(slices(n, &choose(n, &est).weights))
}

/// The given program whose inputs a probe is made of (random, at the run's sizes) and, for a
/// host loop, the parameter its state starts from.
pub(super) struct Probe<'a> {
    pub(super) src: &'a str,
    pub(super) init: Option<usize>,
}

/// Sends each rank its values of the slice program's parameters that `skip` does not take:
/// whole ones broadcast, cut ones scattered (rank 0 cuts them); `None` in their place for the
/// skipped.
pub(super) fn distribute(
    comm: &Comm,
    split: &Split,
    at: &Inputs,
    given: Option<&Inputs>,
    ranges: &[Range<usize>],
    skip: &dyn Fn(&Take) -> bool,
) -> Result<Vec<Option<Value>>, Error> {
    let mut values = vec![];
    let unread = super::unread(split)?;
    let slice = ir::parse(&split.slice_src)?;
    for (j, t) in split.params.iter().enumerate() {
        if skip(t) {
            values.push(None);
            continue;
        }
        if unread[j] {
            let mut sizes = at.sizes.clone();
            sizes.insert(split.part.clone(), ranges[comm.rank].len() as i64);
            values.push(Some(wire::zeros(&slice.params[j].ty, &sizes)?));
            continue;
        }
        // Rank 0 keeps its own values as they are; only the other ranks' travel as bytes.
        let value = match t {
            Take::Whole(k) => {
                let mine = given.map(|ins| wire::to_bytes(&ins.values[*k])).transpose();
                let mine = comm.agree(mine)?;
                let bytes = comm.broadcast(mine)?;
                match given {
                    Some(ins) => ins.values[*k].clone(),
                    None => wire::from_bytes(&bytes)?,
                }
            }
            Take::Cut { .. } => {
                let mut own = None;
                let parts = given
                    .map(|ins| {
                        ranges
                            .iter()
                            .enumerate()
                            .map(|(rank, r)| {
                                let v = take(t, &|k| &ins.values[k], &ins.sizes, r)?;
                                if rank == comm.rank {
                                    own = Some(v);
                                    return Ok(vec![]);
                                }
                                wire::to_bytes(&v)
                            })
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .transpose();
                let parts = comm.agree(parts)?;
                let bytes = comm.scatter(parts)?;
                match own {
                    Some(v) => v,
                    None => wire::from_bytes(&bytes)?,
                }
            }
        };
        values.push(Some(value));
    }
    Ok(values)
}

/// A part's outcome as bytes: `0` and the value, `1` and the error, `2` for an empty slice.
pub(super) fn status(part: Option<Result<Value, Error>>) -> Vec<u8> {
    match part {
        None => vec![2],
        Some(Ok(v)) => match wire::to_bytes(&v) {
            Ok(b) => [&[0u8][..], &b].concat(),
            Err(e) => [&[1u8][..], e.message().as_bytes()].concat(),
        },
        Some(Err(e)) => [&[1u8][..], super::transport::failure_text(&e).as_bytes()].concat(),
    }
}

/// The parts of non-empty slices, in rank order, or the failures as one error. Rank 0's own
/// part is `own` where it sent only its status (`0` alone).
pub(super) fn parts(comm: &Comm, all: &[Vec<u8>], mut own: Option<Value>) -> Result<Vec<Value>, Error> {
    let failures: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| b.first() == Some(&1))
        .map(|(r, b)| (r, String::from_utf8_lossy(&b[1..]).into_owned()))
        .collect();
    if !failures.is_empty() {
        return Err(comm.failed(failures));
    }
    all.iter()
        .filter(|b| b.first() == Some(&0))
        .map(|b| match (&b[1..], own.take()) {
            ([], Some(v)) => Ok(v),
            (bytes, _) => wire::from_bytes(bytes),
        })
        .collect()
}

/// Rank 0's status for a gather to itself: its part stays a value ([`parts`]' `own`).
fn own_status(part: Option<Result<Value, Error>>) -> (Vec<u8>, Option<Value>) {
    match part {
        Some(Ok(v)) => (vec![0], Some(v)),
        other => (status(other), None),
    }
}

/// This rank's slice as its slice program's inputs.
pub(super) fn slice_of(split: &Split, values: Vec<Value>, at: &Inputs, r: &Range<usize>) -> Inputs {
    let mut sizes = at.sizes.clone();
    sizes.insert(split.part.clone(), r.len() as i64);
    Inputs { values, sizes }
}

/// A slice's inputs as they travel: buffer bytes ([`super::bytes`]) or values (a filter's
/// parts, a reduction's partials).
enum Sent {
    Bytes(Vec<Option<lift_runtime::ParamData>>),
    Values(Vec<Option<Value>>),
}

/// A slice's part, as its inputs travelled.
enum Got {
    Bytes(Vec<u8>),
    Value(Value),
}

fn split_run(
    comm: &Comm,
    device: &str,
    src: &str,
    split: &Split,
    result_ty: &ir::Type,
    at: &Inputs,
    given: Option<&Inputs>,
) -> Result<(Option<Value>, String), Error> {
    let (t0, c0) = (Instant::now(), cpu_ms());
    let ranges = ranges(comm, &Probe { src, init: None }, split, at, device)?;
    let r = &ranges[comm.rank];
    let mut sizes = at.sizes.clone();
    sizes.insert(split.part.clone(), r.len() as i64);
    // (decided alike on every rank, from the program alone)
    let as_bytes = super::bytes::byte_path(split, result_ty)?;
    let (mut t_in, mut t_build, mut t_run) = Default::default();
    // (this process's CPU time at the end of each phase: on a host shared with other work, what
    // a phase cost, where its wall time is also the wait for a core)
    let mut cpu = [0.0; 3];
    // Where every rank's device is rank 0's, rank 0 alone chooses the slice's variant (a
    // high-level program's exploration) and the others compile that variant as written.
    let shared = super::compile::same_devices(comm) && !ranges[0].is_empty();
    // The slice is compiled (it needs the sizes only) while the inputs travel.
    let part = std::thread::scope(|scope| -> Result<Option<Result<Got, Error>>, Error> {
        let compiling = (!r.is_empty() && (comm.is_root() || !shared))
            .then(|| {
                std::thread::Builder::new()
                    .name("lift-compile-slice".into())
                    .stack_size(ir::STACK_BYTES)
                    .spawn_scoped(scope, || {
                        let ins = Inputs {
                            values: vec![],
                            sizes: sizes.clone(),
                        };
                        compile_for(&split.slice_src, &ins, device, Some(&split.part))
                    })
            })
            .transpose()
            .map_err(|e| Error::plain(format!("cannot start a thread: {e}")))?;
        let sent = if as_bytes {
            Sent::Bytes(super::bytes::distribute(comm, split, at, given, &ranges, &|_| false)?)
        } else {
            Sent::Values(distribute(comm, split, at, given, &ranges, &|_| false)?)
        };
        t_in = t0.elapsed();
        cpu[0] = cpu_ms();
        let t = Instant::now();
        let compiled = compiling.map(|c| {
            c.join()
                .unwrap_or_else(|_| Err(Error::plain("internal error in the compiling thread (a bug)")))
        });
        let compiled = if shared {
            super::compile::share_variant(
                comm,
                compiled,
                &split.slice_src,
                &sizes,
                device,
                Some(&split.part),
                !r.is_empty(),
            )?
        } else {
            compiled
        };
        t_build = t.elapsed();
        cpu[1] = cpu_ms();
        let Some(compiled) = compiled else { return Ok(None) };
        let t = Instant::now();
        let v = compiled.and_then(|mut c| {
            if forced_failure(comm.rank) {
                if let Some(plan) = c.plan.as_mut() {
                    plan.source
                        .push_str("\n#error \"a failure forced by LIFT_DEVICES_FAIL\"\n");
                }
            }
            match sent {
                Sent::Bytes(ps) => {
                    super::bytes::run_slice(&c, ps.into_iter().flatten().collect(), &sizes, device).map(Got::Bytes)
                }
                Sent::Values(vs) => {
                    let ins = slice_of(split, vs.into_iter().flatten().collect(), at, r);
                    run_compiled_on(&c, &ins, device, false).map(|p| Got::Value(p.value))
                }
            }
        });
        t_run = t.elapsed();
        cpu[2] = cpu_ms();
        Ok(Some(v))
    })?;
    let t1 = Instant::now();
    let timing = |t1: Instant, back: &str| {
        // (a rank without a slice spent its CPU time in the first phase and the last)
        let at = |i: usize| {
            if cpu[i] > 0.0 {
                cpu[i]
            } else {
                cpu[..i].iter().copied().fold(c0, f64::max)
            }
        };
        let end = cpu_ms();
        format!(
            "rank {} ({}): slice {}..{}; inputs to the ranks ({}) {:.3} ms, compiling its slice (beyond that) {:.3} \
             ms, running it {:.3} ms (its device opened, copies, kernels), {back} {:.3} ms (with the wait for the \
             slowest); CPU time of these phases {:.0} / {:.0} / {:.0} / {:.0} ms\n",
            comm.rank,
            comm.devices[comm.rank],
            r.start,
            r.end,
            if as_bytes { "buffer bytes" } else { "values" },
            t_in.as_secs_f64() * 1e3,
            t_build.as_secs_f64() * 1e3,
            t_run.as_secs_f64() * 1e3,
            t1.elapsed().as_secs_f64() * 1e3,
            at(0) - c0,
            at(1) - at(0),
            at(2) - at(1),
            end - at(2),
        )
    };
    let value = if as_bytes {
        let part = part.map(|p| {
            p.and_then(|g| match g {
                Got::Bytes(b) => Ok(b),
                Got::Value(_) => Err(Error::plain("internal: a part as a value on the byte path")),
            })
        });
        super::bytes::gather_bytes(comm, part, result_ty, &at.sizes)?
    } else {
        let part = part.map(|p| {
            p.and_then(|g| match g {
                Got::Value(v) => Ok(v),
                Got::Bytes(_) => Err(Error::plain("internal: a part as bytes on the value path")),
            })
        });
        let mpi_combine = match &split.gather {
            Gather::Reduce { combine } => super::combine::of(combine),
            Gather::Concat | Gather::Finish { .. } => None,
        };
        let (mine, own) = match mpi_combine {
            // (MPI_Reduce of the partials: nothing is gathered)
            Some(how) => {
                let value = super::combine::reduce(comm, how, part, false)?;
                return Ok((value, timing(t1, "partials combined on rank 0 by MPI_Reduce")));
            }
            None if comm.is_root() => own_status(part),
            None => (status(part), None),
        };
        match comm.gather(&mine)? {
            Some(all) => Some(gather(
                split,
                parts(comm, &all, own)?,
                given.expect("rank 0 has the inputs"),
            )?),
            None => None,
        }
    };
    Ok((value, timing(t1, "parts to rank 0 and put together")))
}
