//! Running a split: each slice compiled for its device and run on its own host thread, inputs
//! sliced and parts gathered in order; host loops kept resident on each device between steps.

use crate::decide::*;
use crate::shares::*;
use crate::*;
use ir::interp::Value;
use ir::{Expr, Param, Prim, Program, Type};
use lift_compile::{Error, Options};
use lift_data::Inputs;
use lift_runtime::RunResult;
use std::collections::BTreeMap;
use std::ops::Range;

/// The text `--emit plan --devices` prints: the split, then the slice program's kernels.
/// With `sizes` (`N=4096`), each device's share at those sizes and why (the estimates of
/// [`shares`]: cached, or probed on random inputs).
pub fn describe(src: &str, devices: &[String], sizes: &[String]) -> Result<String, Error> {
    let typed = lift_compile::compile(src, &Options::types_only())?;
    let mut out = format!("devices: {}\n", devices.join(", "));
    let inputs = if sizes.is_empty() {
        None
    } else {
        let given: BTreeMap<String, i64> = lift_compile::parse_sizes(sizes)?.into_iter().collect();
        let inputs = lift_data::random_inputs(&typed.given, &given, 42)?;
        lift_runtime::verify_checks(&typed.given_info, &inputs)?;
        Some(inputs)
    };
    match decide(&typed.given, &typed.given_info) {
        Decision::Whole(why) => match host_loop_or_why(&typed.given, &typed.given_info) {
            Ok(hl) => {
                out.push_str(&format!(
                    "host loop: {} steps, each split over the devices; the gathered state goes to every \
                     device before the next step\n",
                    hl.steps
                ));
                let step_inputs = inputs.map(|mut ins| {
                    ins.values.push(ins.values[hl.init].clone());
                    ins
                });
                describe_split(&mut out, None, &hl.step, devices, step_inputs.as_ref())?;
            }
            Err(looped) => {
                out.push_str(&format!(
                    "not split: {}; the whole program runs on the first device ({})\n",
                    looped.map_or(why, |w| format!("a host loop whose step is not split ({w})")),
                    devices[0]
                ));
                let first = Options {
                    work_group_limit: smallest_limit(&devices[..1]),
                    ..Options::default()
                };
                out.push_str(&lift_compile::compile(src, &first)?.text(lift_compile::Emit::Plan)?);
            }
        },
        Decision::Split(s) => describe_split(&mut out, Some(src), &s, devices, inputs.as_ref())?,
    }
    Ok(out)
}

pub(crate) fn describe_split(
    out: &mut String,
    given_src: Option<&str>,
    s: &Split,
    devices: &[String],
    inputs: Option<&Inputs>,
) -> Result<(), Error> {
    let n = devices.len();
    out.push_str(&format!(
        "split: {size} into {n} contiguous slices of length {part} (shares: equal for identical \
         devices; else each device's fixed cost and time per element, from the tuning cache or a \
         small probe cached per device and program, decide: the devices that end soonest together, \
         none with less than {min:.0}%)\n",
        size = s.size,
        part = s.part,
        min = 100.0 * MIN_SHARE
    ));
    let shared = match inputs {
        Some(ins) => {
            let len = split_len(s, &ins.sizes)?;
            let sh = shares(given_src, s, ins, devices, len)?;
            Some((slices(len, &sh.weights), sh))
        }
        None => None,
    };
    for (i, d) in devices.iter().enumerate() {
        match &shared {
            Some((ranges, sh)) => out.push_str(&format!(
                "  slice {i}: device {d}, {}..{}: {}\n",
                ranges[i].start, ranges[i].end, sh.why[i]
            )),
            None => out.push_str(&format!(
                "  slice {i}: device {d}, its own host thread, context and queue\n"
            )),
        }
    }
    out.push_str(&format!("sliced by {}: {}\n", s.size, s.sliced.join(", ")));
    for note in &s.notes {
        out.push_str(&format!("  {note}\n"));
    }
    if !s.whole.is_empty() {
        out.push_str(&format!("copied whole to every device: {}\n", s.whole.join(", ")));
    }
    match &s.gather {
        Gather::Concat => out.push_str("gathered: the parts concatenated in slice order\n"),
        Gather::Reduce { .. } => out.push_str("gathered: one partial per device, reduced on the host\n"),
        Gather::Finish { name, .. } => out.push_str(&format!(
            "gathered: the parts of `{name}` (each device's partial results) concatenated in slice order; \
             the rest of the program (the final combination) runs on the host on them\n"
        )),
    }
    out.push_str("each slice runs:\n");
    let limited = Options {
        work_group_limit: smallest_limit(devices),
        ..Options::default()
    };
    let slice = lift_compile::compile(&s.slice_src, &limited)?;
    out.push_str(&slice.text(lift_compile::Emit::Plan)?);
    Ok(())
}

/// What one device did.
pub(crate) struct Part {
    pub(crate) value: Value,
    pub(crate) timing: Option<String>,
}

/// Runs `src` (given program text) on `inputs` over `devices`, with slices in proportion to
/// `weights` (one per device; `None`: equal). Every device's error is reported, first by slice
/// order; no partial result is returned.
pub fn run(
    src: &str,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<RunResult, Error> {
    if devices.is_empty() {
        return Err(Error::plain("--devices: no device given"));
    }
    let typed = lift_compile::compile(src, &Options::types_only())?;
    lift_runtime::verify_checks(&typed.given_info, inputs)?;
    let ty = typed.given_info.result().clone();
    let split = match decide(&typed.given, &typed.given_info) {
        Decision::Split(s) => s,
        Decision::Whole(why) => {
            if let Some(hl) = host_loop(&typed.given, &typed.given_info) {
                let (value, timing) = run_host_loop(&hl, inputs, devices, weights, time)?;
                return Ok(result(value, ty, timing));
            }
            let _ = why;
            let part = run_on(src, inputs, &devices[0], time).map_err(|e| on_device(0, &devices[0], e))?;
            return Ok(result(part.value, ty, part.timing));
        }
    };
    let (value, timing) = run_split(src, &split, inputs, devices, weights, time)?;
    Ok(result(value, ty, timing))
}

/// A host loop `iterate K (lambda (s) body) x` (x a parameter) whose body splits over `s`: each
/// step runs split, and its gathered state is the next step's input on every device (n-body:
/// the new positions of every slice go to every device each step).
pub struct HostLoop {
    pub steps: arith::ArithExpr,
    /// The parameter the loop starts from.
    pub init: usize,
    /// The body as a program of the given parameters and the state (last), and its split.
    pub step: Split,
}

/// The host loop at the top of `prog`, when its step splits.
pub fn host_loop(prog: &Program, info: &typeck::TypeInfo) -> Option<HostLoop> {
    host_loop_or_why(prog, info).ok()
}

/// [`host_loop`], or why the program is not such a loop (`None`: it is no host loop at all).
pub fn host_loop_or_why(prog: &Program, info: &typeck::TypeInfo) -> Result<HostLoop, Option<String>> {
    let Expr::Prim {
        prim: Prim::Iterate(k),
        args,
    } = prog.expr(prog.body)
    else {
        return Err(None);
    };
    let Expr::Lambda { params, body } = prog.expr(args[0]) else {
        return Err(Some("the loop's step is not a function of its state".into()));
    };
    let [st] = params.as_slice() else {
        return Err(Some("the loop's step is not a function of its state".into()));
    };
    let Some(init) = (match prog.expr(args[1]) {
        Expr::Var(x) => prog.params.iter().position(|p| p.var == *x),
        _ => None,
    }) else {
        return Err(Some("the loop does not start from an input".into()));
    };
    // The state keeps its type from step to step, so every step is the same program.
    if info.var_ty(*st) != &prog.params[init].ty {
        return Err(Some("the loop's state changes type from step to step".into()));
    }
    let mut sp = prog.clone();
    sp.params.push(Param {
        var: *st,
        ty: prog.params[init].ty.clone(),
        ty_span: prog.params[init].ty_span,
    });
    sp.body = *body;
    let step_prog =
        ir::parse(&ir::print::program(&sp)).map_err(|e| Some(format!("internal: its step: {}", e.message)))?;
    let step_info = typeck::infer(&step_prog).map_err(|e| Some(format!("its step alone: {}", e.message)))?;
    match decide(&step_prog, &step_info) {
        // A reduction's combined partials are the next state as a map's concatenated parts are.
        Decision::Split(step) if matches!(step.gather, Gather::Concat | Gather::Reduce { .. }) => Ok(HostLoop {
            steps: k.clone(),
            init,
            step,
        }),
        Decision::Split(_) => Err(Some(
            "its step ends in a combination on the host (a lowered reduction's final group), which a \
             loop would run every step"
                .into(),
        )),
        Decision::Whole(why) => Err(Some(format!("its step does not split: {why}"))),
    }
}

pub(crate) fn run_host_loop(
    hl: &HostLoop,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let k = hl
        .steps
        .eval(&|n| inputs.sizes.get(n).copied())
        .map_err(|e| Error::plain(format!("cannot evaluate the number of steps {}: {e}", hl.steps)))?;
    let mut step_inputs = Inputs {
        values: inputs.values.clone(),
        sizes: inputs.sizes.clone(),
    };
    step_inputs.values.push(inputs.values[hl.init].clone());
    let n = split_len(&hl.step, &step_inputs.sizes)?;
    // Estimated once, on the first state: every step is the same program on the same sizes.
    let chosen = match weights {
        Some(_) => None,
        None => Some(shares(None, &hl.step, &step_inputs, devices, n)?),
    };
    let weights = chosen
        .as_ref()
        .map_or_else(|| weights.unwrap_or(&[]), |c| &c.weights[..]);
    let ranges = slices(n, weights);
    let jobs: Vec<(usize, Range<usize>)> = ranges.into_iter().enumerate().filter(|(_, r)| !r.is_empty()).collect();
    let state_param = inputs.values.len();
    let started = std::time::Instant::now();
    // One thread per device keeps its session, kernels and buffers for every step; the host
    // sends it each new state (the one input that changes) and gets its slice back.
    let state = std::thread::scope(|scope| -> Result<Value, Error> {
        let (part_tx, part_rx) = std::sync::mpsc::channel::<(usize, Result<Value, Error>)>();
        let mut to_workers = vec![];
        for (slot, (i, r)) in jobs.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel::<std::sync::Arc<Value>>();
            to_workers.push(tx);
            let (part_tx, r, device, first) = (part_tx.clone(), r.clone(), &devices[*i], &step_inputs);
            let step = &hl.step;
            let worker = move || {
                let send = |v: Result<Value, Error>| part_tx.send((slot, v)).is_ok();
                let made = slice_inputs(step, first, r.clone()).and_then(|ins| {
                    let c = compile_for(&step.slice_src, &ins, device, None)?;
                    let plan = c
                        .plan
                        .as_ref()
                        .ok_or_else(|| Error::plain("internal: a step without kernels"))?;
                    lift_runtime::Resident::new(plan, c.info.result(), &ins, Some(device))
                });
                let mut dev = match made {
                    Ok(d) => d,
                    Err(e) => {
                        send(Err(e));
                        return;
                    }
                };
                if !send(dev.launch()) {
                    return;
                }
                while let Ok(state) = rx.recv() {
                    let given = |k: usize| if k == state_param { &*state } else { &first.values[k] };
                    let set = step.params.iter().enumerate().try_for_each(|(j, t)| match t {
                        Take::Whole(k) if *k == state_param => dev.set(j, &state),
                        Take::Cut { param: k, .. } if *k == state_param => {
                            dev.set(j, &take(t, &given, &first.sizes, &r)?)
                        }
                        _ => Ok(()),
                    });
                    if !send(set.and_then(|()| dev.launch())) {
                        return;
                    }
                }
            };
            std::thread::Builder::new()
                .name(format!("lift-device-{i}"))
                .stack_size(ir::STACK_BYTES)
                .spawn_scoped(scope, worker)
                .map_err(|e| on_device(*i, &devices[*i], Error::plain(format!("cannot start its thread: {e}"))))?;
        }
        drop(part_tx);
        let mut state = Value::Array(vec![]);
        for step in 0..k {
            if step > 0 {
                let shared = std::sync::Arc::new(std::mem::replace(&mut state, Value::Array(vec![])));
                for tx in &to_workers {
                    // A worker that stopped has sent its error, read below.
                    let _ = tx.send(shared.clone());
                }
            }
            let mut parts: Vec<Option<Value>> = vec![None; jobs.len()];
            for _ in 0..jobs.len() {
                let (slot, part) = part_rx
                    .recv()
                    .map_err(|_| Error::plain("internal: a device thread ended without its part"))?;
                let i = jobs[slot].0;
                parts[slot] = Some(part.map_err(|e| on_device(i, &devices[i], e))?);
            }
            state = gather(&hl.step, parts.into_iter().flatten().collect(), &step_inputs)?;
        }
        // Closing the channels ends the workers.
        drop(to_workers);
        Ok(state)
    });
    let state = if k == 0 { inputs.values[hl.init].clone() } else { state? };
    let timing = time.then(|| {
        format!(
            "{}host loop over {} device(s): {k} steps in {:.3} ms (wall, with every exchange)\n",
            shares_text(chosen.as_ref(), devices),
            jobs.len(),
            started.elapsed().as_secs_f64() * 1e3
        )
    });
    Ok((state, timing))
}

/// Runs a split program: one thread per device with a non-empty slice, parts gathered in
/// order; any device's error is the result.
pub(crate) fn run_split(
    given_src: &str,
    split: &Split,
    inputs: &Inputs,
    devices: &[String],
    weights: Option<&[f64]>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let n = split_len(split, &inputs.sizes)?;
    let chosen = match weights {
        Some(_) => None,
        None => Some(shares(Some(given_src), split, inputs, devices, n)?),
    };
    let weights = chosen
        .as_ref()
        .map_or_else(|| weights.unwrap_or(&[]), |c| &c.weights[..]);
    let ranges = slices(n, weights);
    let jobs: Vec<(usize, Range<usize>)> = ranges
        .iter()
        .cloned()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .collect();
    // A device given the whole range runs the program as given on the inputs as read: cutting
    // and copying them for a slice program (mm 4096³: 32 M elements) would be for nothing.
    if let [(i, r)] = &jobs[..] {
        if *r == (0..n) && !forced_failure(*i) {
            let d = &devices[*i];
            let part = run_on(given_src, inputs, d, time).map_err(|e| on_device(*i, d, e))?;
            let timing = time.then(|| {
                format!(
                    "{}device {i} ({d}), the whole range:\n{}",
                    shares_text(chosen.as_ref(), devices),
                    part.timing.clone().unwrap_or_default()
                )
            });
            return Ok((part.value, timing));
        }
    }
    // One compilation per distinct device: the slices of one device (named twice) differ in
    // length only, which the kernels take at run time; the first of them compiles, the others
    // wait for it (a slice whose size checks the shared program fails compiles its own).
    let shared: BTreeMap<&String, std::sync::OnceLock<Result<lift_compile::Compiled, Error>>> = jobs
        .iter()
        .map(|(i, _)| (&devices[*i], std::sync::OnceLock::new()))
        .collect();
    let outcomes: Vec<(usize, Result<Part, Error>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|(i, r)| {
                let (i, r) = (*i, r.clone());
                let split = &split;
                let device = &devices[i];
                let shared = &shared[device];
                let handle = std::thread::Builder::new()
                    .name(format!("lift-device-{i}"))
                    .stack_size(ir::STACK_BYTES)
                    .spawn_scoped(scope, move || -> Result<Part, Error> {
                        let slice_inputs = slice_inputs(split, inputs, r)?;
                        let own;
                        let compiled = match shared
                            .get_or_init(|| compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part)))
                        {
                            Ok(c) if lift_runtime::verify_checks(&c.info, &slice_inputs).is_ok() => c,
                            Ok(_) => {
                                own = compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part))?;
                                &own
                            }
                            // (each waiting slice reports the one failure as its own)
                            Err(e) => return Err(Error::plain(e.message())),
                        };
                        if forced_failure(i) {
                            let mut failing = compile_for(&split.slice_src, &slice_inputs, device, Some(&split.part))?;
                            if let Some(plan) = failing.plan.as_mut() {
                                plan.source
                                    .push_str("\n#error \"a failure forced by LIFT_DEVICES_FAIL\"\n");
                            }
                            return run_compiled_on(&failing, &slice_inputs, device, time);
                        }
                        run_compiled_on(compiled, &slice_inputs, device, time)
                    });
                (i, handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(i, h)| {
                let out = match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(Error::plain("internal error in its thread (a bug)"))),
                    Err(e) => Err(Error::plain(format!("cannot start its thread: {e}"))),
                };
                (i, out)
            })
            .collect()
    });
    let mut parts = vec![];
    let mut failed = vec![];
    for (i, o) in outcomes {
        match o {
            Ok(p) => parts.push((i, p)),
            Err(e) => failed.push(on_device(i, &devices[i], e)),
        }
    }
    if !failed.is_empty() {
        let first = failed.remove(0);
        return Err(match first {
            Error::Plain { message, mut notes } => {
                notes.extend(failed.iter().map(Error::message));
                notes.push("no result: every slice must succeed".into());
                Error::Plain { message, notes }
            }
            other => other,
        });
    }
    let timing = time.then(|| {
        let mut t = shares_text(chosen.as_ref(), devices);
        for (i, p) in &parts {
            t.push_str(&format!(
                "device {i} ({}):\n{}",
                devices[*i],
                p.timing.clone().unwrap_or_default()
            ));
        }
        t
    });
    let value = gather(split, parts.into_iter().map(|(_, p)| p.value).collect(), inputs)?;
    Ok((value, timing))
}

/// `lift run --devices`: loads the inputs as `lift run` does and runs over `devices`.
pub fn run_files(
    src: &str,
    data: &[String],
    sizes: &[String],
    devices: &[String],
    time: bool,
) -> Result<RunResult, Error> {
    let typed = lift_compile::compile(src, &Options::types_only())?;
    let sources = lift_runtime::read_sources(data)?;
    let given = lift_compile::parse_sizes(sizes)?;
    let inputs = lift_data::load(&typed.given, &sources, &given)?;
    run(src, &inputs, devices, None, time)
}

/// Each device's share and why (nothing when the shares were given).
pub(crate) fn shares_text(chosen: Option<&Shares>, devices: &[String]) -> String {
    let Some(c) = chosen else { return String::new() };
    devices
        .iter()
        .zip(&c.why)
        .enumerate()
        .map(|(i, (d, why))| format!("share of device {i} ({d}): {why}\n"))
        .collect()
}

pub(crate) fn result(value: Value, ty: Type, timing: Option<String>) -> RunResult {
    let json = value.to_json();
    RunResult {
        value,
        ty,
        json,
        timing,
    }
}

/// One clean error naming the device of slice `i`.
pub(crate) fn on_device(i: usize, device: &str, e: Error) -> Error {
    let message = format!("device {i} ({device}) failed: {}", e.message());
    match e {
        // The driver's build log and the like stay with the message.
        Error::Plain { notes, .. } => Error::Plain { message, notes },
        Error::Source(_) | Error::Invalid(_) => Error::plain(message),
    }
}

/// The inputs of one slice program: sliced parameters cut to `r`, the rest whole.
pub(crate) fn slice_inputs(split: &Split, inputs: &Inputs, r: Range<usize>) -> Result<Inputs, Error> {
    let values = split
        .params
        .iter()
        .map(|t| take(t, &|k| &inputs.values[k], &inputs.sizes, &r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sizes = inputs.sizes.clone();
    sizes.insert(split.part.clone(), r.len() as i64);
    Ok(Inputs { values, sizes })
}

/// The value of one slice program parameter for the slice `r`, from the given program's
/// inputs (`given(k)`: its parameter `k`).
pub(crate) fn take<'a>(
    t: &Take,
    given: &dyn Fn(usize) -> &'a Value,
    sizes: &BTreeMap<String, i64>,
    r: &Range<usize>,
) -> Result<Value, Error> {
    let rows = |v: &Value, r: Range<usize>| match v {
        Value::Array(xs) if r.end <= xs.len() => Ok(Value::Array(xs[r].to_vec())),
        _ => Err(Error::plain(
            "internal: a sliced input is not an array of the split's length",
        )),
    };
    match t {
        Take::Whole(k) => Ok(given(*k).clone()),
        Take::Cut {
            param,
            dim,
            window: (size, step),
            pre,
        } => {
            let made;
            let whole = match pre {
                None => given(*param),
                Some(src) => {
                    let prog = ir::parse(src)?;
                    let lookup = |n: &str| sizes.get(n).copied();
                    made = ir::interp::eval(&prog, std::slice::from_ref(given(*param)), &lookup)
                        .map_err(|e| Error::plain(format!("making an input's layout on the host: {}", e.message)))?;
                    &made
                }
            };
            let read = if r.is_empty() {
                0..0
            } else {
                r.start * step..r.start * step + (r.len() - 1) * step + size
            };
            match (dim, whole) {
                (0, v) => rows(v, read),
                (_, Value::Array(xs)) => xs
                    .iter()
                    .map(|row| rows(row, read.clone()))
                    .collect::<Result<_, _>>()
                    .map(Value::Array),
                _ => Err(Error::plain("internal: a transposed input is not an array")),
            }
        }
    }
}

/// The length of the split range at these sizes.
pub(crate) fn split_len(split: &Split, sizes: &BTreeMap<String, i64>) -> Result<usize, Error> {
    let n = split
        .count
        .eval(&|name| sizes.get(name).copied())
        .map_err(|e| Error::plain(format!("internal: the split's length {}: {e}", split.count)))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Compiles `src` for `device` at the inputs' sizes (its tuned variant when the cache has one)
/// and runs it there.
pub(crate) fn run_on(src: &str, inputs: &Inputs, device: &str, time: bool) -> Result<Part, Error> {
    run_compiled_on(&compile_for(src, inputs, device, None)?, inputs, device, time)
}

/// The variable that makes the build of one slice's kernels fail (its value: the slice's
/// index), so that the path of a device failing mid-run can be tested on any machine.
pub const FAIL_VAR: &str = "LIFT_DEVICES_FAIL";

pub(crate) fn forced_failure(slice: usize) -> bool {
    std::env::var(FAIL_VAR).is_ok_and(|v| v.trim() == slice.to_string())
}

pub(crate) fn run_compiled_on(
    compiled: &lift_compile::Compiled,
    inputs: &Inputs,
    device: &str,
    time: bool,
) -> Result<Part, Error> {
    // A part's value only: its JSON text (as `run_compiled` makes) would be thrown away, and
    // formatting a large part costs as much as a short kernel.
    if let (Some(plan), None) = (&compiled.plan, &compiled.host) {
        lift_runtime::verify_checks(&compiled.info, inputs)?;
        let (value, timing) = lift_runtime::run(plan, inputs, Some(device), time)?;
        return Ok(Part { value, timing });
    }
    let opts = lift_runtime::RunOptions {
        device: Some(device.to_string()),
        time,
        interp: false,
    };
    let r = lift_runtime::run_compiled(compiled, inputs, &opts)?;
    Ok(Part {
        value: r.value,
        timing: r.timing,
    })
}

/// Compiled as `lift run --device` compiles: the tuned variant for this device when the cache
/// has one, and kernels within the device's work-group limits (without them a variant could
/// be refused at launch, and it could differ from the one-device run's), built for the inputs'
/// sizes but `vary`: the size of a slice, where one compilation serves slices of several.
pub(crate) fn compile_for(
    src: &str,
    inputs: &Inputs,
    device: &str,
    vary: Option<&str>,
) -> Result<lift_compile::Compiled, Error> {
    let typed = lift_compile::compile(src, &Options::types_only())?;
    let info = host_runner::device_info(Some(device)).map_err(|e| Error::plain(e.to_string()))?;
    let mut opts = lift_runtime::run_options(&typed.given, &inputs.sizes, Some(&info));
    opts.vary.extend(vary.map(str::to_string));
    lift_compile::compile(src, &opts)
}

/// The smallest of the devices' work-group limits, for a plan shown once for all of them
/// (`None` where a device cannot be queried: the plan is then the one without a device).
pub(crate) fn smallest_limit(devices: &[String]) -> Option<codegen_opencl::WorkGroupLimit> {
    let mut limits = devices.iter().map(|d| {
        host_runner::device_info(Some(d))
            .ok()
            .map(|i| lift_runtime::work_group_limit(&i))
    });
    let first = limits.next()??;
    limits.try_fold(first, |a, b| {
        let b = b?;
        Some(codegen_opencl::WorkGroupLimit {
            total: a.total.min(b.total),
            per_dim: [0, 1, 2].map(|d| a.per_dim[d].min(b.per_dim[d])),
            local_mem: a.local_mem.min(b.local_mem),
        })
    })
}

/// Puts the parts together in slice order (`inputs`: the given program's, which the rest of a
/// [`Gather::Finish`] may read).
pub(crate) fn gather(split: &Split, parts: Vec<Value>, inputs: &Inputs) -> Result<Value, Error> {
    let concat = |parts: Vec<Value>| {
        let mut all = vec![];
        for p in parts {
            match p {
                Value::Array(xs) => all.extend(xs),
                _ => return Err(Error::plain("internal: a part of the result is not an array")),
            }
        }
        Ok(Value::Array(all))
    };
    match &split.gather {
        Gather::Concat => concat(parts),
        Gather::Finish { rest, .. } => {
            let prog = ir::parse(rest)?;
            let mut values = inputs.values.clone();
            values.push(concat(parts)?);
            let lookup = |n: &str| inputs.sizes.get(n).copied();
            ir::interp::eval(&prog, &values, &lookup)
                .map_err(|e| Error::plain(format!("the final combination on the host: {}", e.message)))
        }
        Gather::Reduce { combine } => {
            let mut partials = vec![];
            for p in parts {
                match p {
                    Value::Array(mut xs) if xs.len() == 1 => partials.push(xs.remove(0)),
                    _ => return Err(Error::plain("internal: a partial result is not one value")),
                }
            }
            let prog = ir::parse(combine)?;
            let n = partials.len() as i64;
            let lookup = |name: &str| (prog.sizes.last().map(String::as_str) == Some(name)).then_some(n);
            ir::interp::eval(&prog, &[Value::Array(partials)], &lookup)
                .map_err(|e| Error::plain(format!("combining the partial results: {}", e.message)))
        }
    }
}
