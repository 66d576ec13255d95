//! Timing a split run phase by phase on every device (`lift bench --devices`): uploads, kernels,
//! downloads and gathering, over repeated runs in alternating order.

use crate::decide::*;
use crate::run::*;
use crate::shares::*;
use crate::*;
use ir::interp::Value;
use lift_compile::{Error, Options};
use lift_data::Inputs;
use std::ops::Range;

/// One device's phases in one measured run, in ms: `kernel_ms` on the device's clock (profiling
/// events, summed over kernels and steps), the rest on the host around blocking calls.
#[derive(Clone, Debug, Default)]
pub struct PhaseTimes {
    /// Writing the device's inputs (its slices and the inputs copied whole), bytes made before.
    pub upload_ms: f64,
    pub kernel_ms: f64,
    /// Reading its part of the result back (every step's, in a host loop).
    pub download_ms: f64,
    /// Turning the bytes read into values.
    pub decode_ms: f64,
    /// A host loop's new state sent to the device each step after the first (made into bytes
    /// and written).
    pub exchange_ms: f64,
}

impl PhaseTimes {
    pub(crate) fn add(&mut self, o: &PhaseTimes) {
        self.upload_ms += o.upload_ms;
        self.kernel_ms += o.kernel_ms;
        self.download_ms += o.download_ms;
        self.decode_ms += o.decode_ms;
        self.exchange_ms += o.exchange_ms;
    }
}

/// One device of a measured run.
#[derive(Clone, Debug)]
pub struct MeasuredDevice {
    /// Its position in the device list, the list's name for it and its OpenCL name.
    pub index: usize,
    pub device: String,
    pub name: String,
    /// Its slice of the split range.
    pub range: Range<usize>,
    pub times: PhaseTimes,
}

/// One whole run over the devices.
#[derive(Clone, Debug)]
pub struct MeasuredRun {
    pub devices: Vec<MeasuredDevice>,
    /// Putting the parts together on the host (every step's, in a host loop).
    pub gather_ms: f64,
    /// Host wall time from the first upload to the last part's bytes read back (a host loop's
    /// steps before the last include their decoding and gather: the next step needs them).
    pub wall_ms: f64,
    /// Host wall time from the first upload to the gathered result (values).
    pub total_ms: f64,
}

/// [`measure`]'s result: the run of median wall time of `repeats`, after a warm-up run.
#[derive(Clone, Debug)]
pub struct Measured {
    pub value: Value,
    pub median: MeasuredRun,
    /// Every timed run's wall time (ms), in order.
    pub walls_ms: Vec<f64>,
    /// The length of the split range, its size variable, and the steps of a host loop (1 for
    /// a program without one).
    pub n: usize,
    pub size: String,
    pub steps: usize,
    pub sliced: Vec<String>,
    pub whole: Vec<String>,
    /// Per device: its share and why.
    pub shares: Vec<String>,
    /// Per device with a slice: compiling its slice program, building it, making its
    /// buffers and the first upload (ms, host wall), before the warm-up run.
    pub setup_ms: Vec<f64>,
}

/// What a measuring device thread is asked to do.
pub(crate) enum Order {
    /// Upload every input, then launch.
    Start,
    /// Send the new state of a host loop, then launch.
    State(std::sync::Arc<Value>),
}

/// `lift bench --devices`: `run` split as [`run`] splits it (a split program, or a host loop
/// whose step splits), with each phase of each device timed. One thread per device compiles
/// its slice program, builds it and makes its buffers once; a warm-up run follows, then
/// `repeats` timed runs on the inputs as uploaded bytes made beforehand (the host's slicing
/// and encoding of the inputs are not timed). A program that does not split is an error:
/// there is nothing to compare.
pub fn measure(src: &str, inputs: &Inputs, devices: &[String], repeats: usize) -> Result<Measured, Error> {
    if devices.is_empty() {
        return Err(Error::plain("--devices: no device given"));
    }
    let typed = lift_compile::compile(src, &Options::types_only())?;
    lift_runtime::verify_checks(&typed.given_info, inputs)?;
    // A host loop's step reads its state as one more input; a split program reads the inputs
    // as given (not copied: mm 8192³'s are 134 M values).
    let with_state;
    let mut step_inputs = inputs;
    let (split, steps, state_param, given_src) = match decide(&typed.given, &typed.given_info) {
        Decision::Split(s) => (s, 1, None, Some(src)),
        Decision::Whole(why) => {
            let Some(hl) = host_loop(&typed.given, &typed.given_info) else {
                return Err(Error::plain(format!(
                    "the program is not split over devices ({why}): there is nothing to measure per device"
                )));
            };
            let k = hl
                .steps
                .eval(&|n| inputs.sizes.get(n).copied())
                .map_err(|e| Error::plain(format!("cannot evaluate the number of steps {}: {e}", hl.steps)))?;
            let k = usize::try_from(k).unwrap_or(0);
            if k == 0 {
                return Err(Error::plain("the host loop takes no step: there is nothing to measure"));
            }
            let mut values = inputs.values.clone();
            values.push(inputs.values[hl.init].clone());
            with_state = Inputs {
                values,
                sizes: inputs.sizes.clone(),
            };
            step_inputs = &with_state;
            (hl.step, k, Some(inputs.values.len()), None)
        }
    };
    let n = split_len(&split, &step_inputs.sizes)?;
    let mut all_names = vec![];
    for (i, d) in devices.iter().enumerate() {
        let s = host_runner::Session::open(Some(d)).map_err(|e| on_device(i, d, Error::plain(e.to_string())))?;
        all_names.push(s.info().name.clone());
    }
    let chosen = if devices.len() == 1 {
        Shares {
            weights: vec![1.0],
            why: vec!["the whole range: the only device".into()],
        }
    } else if all_names.iter().all(|n| *n == all_names[0]) {
        // Devices of one model (two H200s) share equally: calibrating them would only add
        // its noise to the split (a few rows more on one than on the other), and cost probes.
        Shares {
            weights: vec![1.0; devices.len()],
            why: devices
                .iter()
                .map(|_| format!("an equal share: every device is a {}", all_names[0]))
                .collect(),
        }
    } else {
        shares(given_src, &split, step_inputs, devices, n)?
    };
    let jobs: Vec<(usize, Range<usize>)> = slices(n, &chosen.weights)
        .into_iter()
        .enumerate()
        .filter(|(_, r)| !r.is_empty())
        .collect();
    let names: Vec<String> = jobs.iter().map(|(i, _)| all_names[*i].clone()).collect();
    /// A part, its times and when its bytes were on the host.
    type Got = (Value, PhaseTimes, std::time::Instant);
    type Reply = (usize, Result<Option<Got>, Error>);
    /// Every timed run (its gathered value and times) and each device's setup time.
    type Runs = (Value, Vec<MeasuredRun>, Vec<f64>);
    let (value, runs, setup_ms) = std::thread::scope(|scope| -> Result<Runs, Error> {
        let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Reply>();
        let mut to_workers = vec![];
        for (slot, (i, r)) in jobs.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel::<Order>();
            to_workers.push(tx);
            let (reply_tx, r, device, first, split) = (reply_tx.clone(), r.clone(), &devices[*i], step_inputs, &split);
            let worker = move || {
                let send = |v: Result<Option<Got>, Error>| reply_tx.send((slot, v)).is_ok();
                let made = slice_inputs(split, first, r.clone()).and_then(|ins| {
                    let c = compile_for(&split.slice_src, &ins, device, None)?;
                    let plan = match (&c.plan, &c.host) {
                        (Some(plan), None) => plan,
                        _ => return Err(Error::plain("its slice program is not one kernel plan")),
                    };
                    if plan.result.lengths.is_some() {
                        // Its buffers are sized by the run's outcome, not once before it.
                        return Err(Error::plain(
                            "`lift bench --devices` does not time a program whose result is a filter's \
                             (its length is known only after each run); `lift run --devices --time` runs it",
                        ));
                    }
                    lift_runtime::verify_checks(&c.info, &ins)?;
                    let dev = lift_runtime::Resident::new(plan, c.info.result(), &ins, Some(device))?;
                    let bytes = ins
                        .values
                        .iter()
                        .enumerate()
                        .map(|(j, v)| dev.encode_param(j, v))
                        .collect::<Result<Vec<_>, _>>()?;
                    Ok((dev, bytes))
                });
                let (mut dev, bytes) = match made {
                    Ok(d) => d,
                    Err(e) => {
                        send(Err(e));
                        return;
                    }
                };
                if !send(Ok(None)) {
                    return;
                }
                while let Ok(order) = rx.recv() {
                    let mut t = PhaseTimes::default();
                    let sent = match order {
                        Order::Start => {
                            let clock = std::time::Instant::now();
                            let up = bytes.iter().enumerate().try_for_each(|(j, b)| match b {
                                Some(b) => dev.upload_param(j, b),
                                None => Ok(()),
                            });
                            t.upload_ms = clock.elapsed().as_secs_f64() * 1e3;
                            up
                        }
                        Order::State(state) => {
                            let clock = std::time::Instant::now();
                            let sp = state_param.unwrap_or(usize::MAX);
                            let given = |k: usize| if k == sp { &*state } else { &first.values[k] };
                            let set = split.params.iter().enumerate().try_for_each(|(j, tk)| match tk {
                                Take::Whole(k) if *k == sp => dev.set(j, &state),
                                Take::Cut { param: k, .. } if *k == sp => {
                                    dev.set(j, &take(tk, &given, &first.sizes, &r)?)
                                }
                                _ => Ok(()),
                            });
                            t.exchange_ms = clock.elapsed().as_secs_f64() * 1e3;
                            set
                        }
                    };
                    let out = sent.and_then(|()| dev.launch_profiled()).map(|(v, rt)| {
                        t.kernel_ms = rt.kernel_ns as f64 / 1e6;
                        t.download_ms = rt.download_ms;
                        t.decode_ms = rt.decode_ms;
                        let read = std::time::Instant::now() - std::time::Duration::from_secs_f64(rt.decode_ms / 1e3);
                        Some((v, t, read))
                    });
                    if !send(out) {
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
        drop(reply_tx);
        let setup_clock = std::time::Instant::now();
        let mut setup_ms = vec![0.0; jobs.len()];
        let receive = |want: usize| -> Result<Vec<Option<Got>>, Error> {
            let mut got: Vec<Option<Option<Got>>> = vec![None; want];
            for _ in 0..want {
                let (slot, r) = reply_rx
                    .recv()
                    .map_err(|_| Error::plain("internal: a device thread ended without its part"))?;
                let i = jobs[slot].0;
                got[slot] = Some(r.map_err(|e| on_device(i, &devices[i], e))?);
            }
            Ok(got.into_iter().map(Option::flatten).collect())
        };
        // Setups report one by one, so that each device's time is its own.
        for _ in 0..jobs.len() {
            let (slot, r) = reply_rx
                .recv()
                .map_err(|_| Error::plain("internal: a device thread ended before it was ready"))?;
            let i = jobs[slot].0;
            r.map_err(|e| on_device(i, &devices[i], e))?;
            setup_ms[slot] = setup_clock.elapsed().as_secs_f64() * 1e3;
        }
        let mut runs = vec![];
        let mut value = None;
        for run in 0..=repeats.max(1) {
            let started = std::time::Instant::now();
            let mut per = vec![PhaseTimes::default(); jobs.len()];
            let mut gather_ms = 0.0;
            let mut last_read = None;
            let mut state = Value::Array(vec![]);
            for step in 0..steps {
                let order = if step == 0 {
                    None
                } else {
                    Some(std::sync::Arc::new(std::mem::replace(&mut state, Value::Array(vec![]))))
                };
                for tx in &to_workers {
                    // A worker that stopped has sent its error, read below.
                    let _ = tx.send(match &order {
                        None => Order::Start,
                        Some(s) => Order::State(s.clone()),
                    });
                }
                let mut parts = vec![];
                for (slot, p) in receive(jobs.len())?.into_iter().enumerate() {
                    let (v, t, read) =
                        p.ok_or_else(|| Error::plain("internal: a device answered a run with no part"))?;
                    per[slot].add(&t);
                    parts.push(v);
                    last_read = last_read.max(Some(read));
                }
                let clock = std::time::Instant::now();
                state = gather(&split, parts, step_inputs)?;
                gather_ms += clock.elapsed().as_secs_f64() * 1e3;
            }
            let total_ms = started.elapsed().as_secs_f64() * 1e3;
            let wall_ms = last_read.map_or(total_ms, |t| (t - started).as_secs_f64() * 1e3);
            let devices = jobs
                .iter()
                .zip(per)
                .zip(&names)
                .map(|(((i, r), times), name)| MeasuredDevice {
                    index: *i,
                    device: devices[*i].clone(),
                    name: name.clone(),
                    range: r.clone(),
                    times,
                })
                .collect();
            // The first run warmed up; one result is kept (mm 8192³'s is 67 M values).
            if run == 1 {
                value = Some(state);
            }
            if run > 0 {
                runs.push(MeasuredRun {
                    devices,
                    gather_ms,
                    wall_ms,
                    total_ms,
                });
            }
        }
        // Closing the channels ends the workers.
        drop(to_workers);
        let value = value.ok_or_else(|| Error::plain("internal: no timed run"))?;
        Ok((value, runs, setup_ms))
    })?;
    let walls_ms: Vec<f64> = runs.iter().map(|m| m.wall_ms).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| walls_ms[a].total_cmp(&walls_ms[b]));
    let median = runs[order[order.len() / 2]].clone();
    Ok(Measured {
        value,
        median,
        walls_ms,
        n,
        size: split.size.clone(),
        steps,
        sliced: split.sliced.clone(),
        whole: split.whole.clone(),
        shares: devices
            .iter()
            .zip(&chosen.why)
            .enumerate()
            .map(|(i, (d, why))| format!("device {i} ({d}): {why}"))
            .collect(),
        setup_ms,
    })
}
