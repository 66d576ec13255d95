//! Running a host program (`lift_compile::host`): parameters uploaded once, units launched as
//! the host steps say, every value kept on the device; only conditions and the result are read
//! back. The steps are walked in [`steps`], units launched in [`units`].

mod steps;
mod units;

use crate::launch::*;
use codegen_opencl::KernelPlan;
use ir::interp::Value;
use ir::{Diagnostic, Type};
use lift_compile::Error;
use lift_data::layout::{decode_dims, encode, layout};
use lift_data::Inputs;
use memalloc::Role;
use std::collections::BTreeMap;

/// A host value at run time.
#[derive(Clone, Debug)]
pub(crate) enum HostVal {
    Dev(host_runner::Resident),
    /// A filter result: its data (at its slot's capacity, `host::HostProgram::caps`) and its
    /// length (one int), both on the device.
    Exist(host_runner::Resident, host_runner::Resident),
    /// A scalar parameter, passed to kernels by value.
    Scalar(Value),
}

/// A unit's buffers, made on its first launch and kept for the run.
pub(crate) struct UnitRt {
    pub(crate) prepared: host_runner::Prepared,
    /// Per plan buffer: its resident buffer (inputs and the output are bound per launch).
    pub(crate) fixed: BTreeMap<usize, host_runner::Resident>,
    /// Buffers zeroed before every launch (counters of filters, lengths), each with a buffer of
    /// zeros of its size, uploaded once and copied from: Oclgrind 21.10 takes filled memory as
    /// uninitialized, and a blocking upload per launch would stall a host loop.
    pub(crate) zeroed: Vec<(host_runner::Resident, host_runner::Resident)>,
    /// Two output buffers used in turn, so that a launch never overwrites the value the
    /// previous one produced (a loop reads it).
    /// Made on first use: a unit that always writes a loop's state buffer needs neither, one
    /// that runs once needs one.
    pub(crate) outs: [Option<host_runner::Resident>; 2],
    /// The lengths of `outs` when the unit returns a filter result.
    pub(crate) out_lens: [Option<host_runner::Resident>; 2],
    /// Four zero bytes copied into the output's length before each launch.
    pub(crate) len_zeros: Option<host_runner::Resident>,
    pub(crate) exist_out: bool,
    pub(crate) out_bytes: usize,
    pub(crate) turn: usize,
    pub(crate) flag: host_runner::Resident,
    pub(crate) env: Env,
    pub(crate) checked: bool,
}

pub(crate) struct HostExec<'a> {
    // Field order is drop order: the units' kernels go before the session's context.
    pub(crate) units: Vec<Option<UnitRt>>,
    pub(crate) session: host_runner::Session,
    pub(crate) hp: &'a lift_compile::host::HostProgram,
    pub(crate) inputs: &'a Inputs,
    pub(crate) vals: Vec<Option<HostVal>>,
    pub(crate) profile: bool,
    /// Launch events: (loop number, step within it or `usize::MAX` outside loops, kernel).
    pub(crate) events: Vec<(usize, usize, String, host_runner::LaunchEvent)>,
    /// The loop and step being run, for `events`.
    pub(crate) at: (usize, usize),
    /// Each loop run: its kind and the number of steps it took.
    pub(crate) loops: Vec<(&'static str, usize)>,
    /// Whether an `iterate-until` enqueues its next step before its condition is read.
    pub(crate) ahead: bool,
    /// Whether every unit's flag is read right after its launch (`run_host`'s second run).
    pub(crate) check_each: bool,
    /// Whether a device-side check failed (read at the end of the run).
    pub(crate) flag_failed: bool,
    /// Each loop's state buffers, by its state slot.
    pub(crate) loop_bufs: BTreeMap<usize, [HostVal; 2]>,
    /// The length buffers of arrays used as filter results, by the array's slot.
    pub(crate) array_lens: BTreeMap<usize, host_runner::Resident>,
}

/// Runs a host program (`crate::host`): uploads the parameters once, launches units as the
/// host steps say, keeps every value on the device, reads back only conditions and the result.
pub fn run_host(
    hp: &lift_compile::host::HostProgram,
    inputs: &Inputs,
    device: Option<&str>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let (value, measured) = run_host_measured(hp, inputs, device, time)?;
    Ok((value, measured.map(|m| m.text())))
}

/// What a profiled run of a host program measured (`lift run --time` prints it, `lift bench`
/// reports it).
#[derive(Clone, Debug)]
pub struct HostMeasure {
    pub device: String,
    /// Per kernel: launches and their total device time (ms).
    pub per_kernel: Vec<(String, usize, f64)>,
    /// Each loop run: its kind, the steps it took and each step's device time (ms; a step
    /// enqueued while the previous condition was read is not counted).
    pub loops: Vec<(&'static str, usize, Vec<f64>)>,
    /// The sum of every kernel's device time (ms).
    pub kernel_ms: f64,
    /// From the first kernel's start to the last one's end, on the device (ms).
    pub span_ms: Option<f64>,
    /// Host wall time from the upload of the inputs to the read-back of the result (ms).
    pub wall_ms: f64,
}

impl HostMeasure {
    pub fn text(&self) -> String {
        let mut s = format!("device: {}\n", self.device);
        for (k, n, ms) in &self.per_kernel {
            s.push_str(&format!("{k}: {n} launches, {ms:.3} ms\n"));
        }
        for (l, (kind, steps, times)) in self.loops.iter().enumerate() {
            s.push_str(&format!("loop {l} ({kind}): {steps} steps"));
            if !times.is_empty() {
                let mut sorted = times.clone();
                sorted.sort_by(f64::total_cmp);
                s.push_str(&format!(
                    ", device time per step: min {:.3} ms, median {:.3} ms, max {:.3} ms\n",
                    sorted[0],
                    sorted[sorted.len() / 2],
                    sorted[sorted.len() - 1]
                ));
                let shown: Vec<String> = times
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i < 8 || *i + 2 >= times.len())
                    .map(|(i, t)| format!("{}: {t:.3}", i + 1))
                    .collect();
                s.push_str(&format!("  per step (ms): {}\n", shown.join(", ")));
            } else {
                s.push('\n');
            }
        }
        s.push_str(&format!("total kernel time: {:.3} ms\n", self.kernel_ms));
        if let Some(span) = self.span_ms {
            s.push_str(&format!(
                "device span from the first kernel's start to the last one's end: {span:.3} ms ({:.1} % above the kernels' sum)\n",
                (span / self.kernel_ms.max(1e-6) - 1.0) * 100.0
            ));
        }
        s.push_str(&format!(
            "host wall time (upload to read-back): {:.3} ms\n",
            self.wall_ms
        ));
        s
    }
}

/// [`run_host`] with what it measured (when `time`) as a [`HostMeasure`].
pub fn run_host_measured(
    hp: &lift_compile::host::HostProgram,
    inputs: &Inputs,
    device: Option<&str>,
    time: bool,
) -> Result<(Value, Option<HostMeasure>), Error> {
    match run_host_once(hp, inputs, device, time, false) {
        // The flags are read once, at the end. A step run ahead of an `iterate-until`
        // condition computes a state the interpreter never reaches, and a check failing in it
        // is no error of the program; and a loop's later steps overwrite the length that a
        // failed check names. Such runs are rare: the program runs again with every condition
        // waited for before the next step and every unit's flag read after its launch, which
        // stops at the first failure, with its own values.
        Err((_, true)) => run_host_once(hp, inputs, device, time, true).map_err(|(e, _)| e),
        r => r.map_err(|(e, _)| e),
    }
}

/// One run (`checked`: each step after its condition, each unit's checks read after its
/// launch); on failure, also whether a device-side check failed.
pub(crate) fn run_host_once(
    hp: &lift_compile::host::HostProgram,
    inputs: &Inputs,
    device: Option<&str>,
    time: bool,
    checked: bool,
) -> Result<(Value, Option<HostMeasure>), (Error, bool)> {
    let session = host_runner::Session::reuse(device).map_err(|e| (Error::plain(e.to_string()), false))?;
    let mut x = HostExec {
        units: (0..hp.units.len()).map(|_| None).collect(),
        session,
        hp,
        inputs,
        vals: vec![None; hp.slots.len()],
        profile: time,
        events: vec![],
        at: (usize::MAX, usize::MAX),
        loops: vec![],
        ahead: !checked,
        check_each: checked,
        flag_failed: false,
        loop_bufs: BTreeMap::new(),
        array_lens: BTreeMap::new(),
    };
    let r = x.run();
    let flag_failed = x.flag_failed;
    if r.is_ok() {
        // The units' buffers go before their session is kept (or dropped).
        let HostExec {
            session, units, events, ..
        } = x;
        drop(events);
        drop(units);
        session.keep(device);
    }
    r.map_err(|e| (e, flag_failed))
}

impl HostExec<'_> {
    pub(crate) fn run(&mut self) -> Result<(Value, Option<HostMeasure>), Error> {
        let (hp, inputs, time) = (self.hp, self.inputs, self.profile);
        // Every unit's kernels are built and its buffers made before the run starts.
        for (u, unit) in hp.units.iter().enumerate() {
            if hp.direct.contains(&u) {
                continue;
            }
            let plan = unit
                .compiled
                .plan
                .as_ref()
                .ok_or_else(|| Error::plain("internal: a unit without kernels"))?;
            self.units[u] = Some(self.make_unit(u, plan)?);
        }
        let started = std::time::Instant::now();
        for (k, &slot) in hp.params.iter().enumerate() {
            let v = &inputs.values[k];
            let t = &hp.slots[slot];
            let hv = match t {
                Type::Array(..) => {
                    let (dims, elem) = shape(t, &inputs.sizes)?;
                    let (esz, _) = layout(&elem);
                    let bytes = dims.iter().product::<usize>() * esz;
                    let mut data = Vec::with_capacity(bytes);
                    encode(v, &elem, &mut data)?;
                    let r = self.session.alloc("parameter", data.len()).map_err(run_error)?;
                    self.session.upload(r, &data).map_err(run_error)?;
                    HostVal::Dev(r)
                }
                _ => HostVal::Scalar(v.clone()),
            };
            self.vals[slot] = Some(hv);
        }
        let result = self.block(&hp.main, None)?;
        let value = self.read_back(result)?;
        self.session.finish().map_err(run_error)?;
        let wall = started.elapsed();
        self.check_flags()?;
        let timing = time.then(|| self.timing(wall)).transpose()?;
        Ok((value, timing))
    }

    /// The value of slot `result` read back from the device: a tuple slot component by
    /// component, a filter result only up to its length.
    pub(crate) fn read_back(&self, result: usize) -> Result<Value, Error> {
        let (hp, inputs) = (self.hp, self.inputs);
        if let Some(parts) = hp.tuples.get(&result) {
            return Ok(Value::Tuple(
                parts.iter().map(|p| self.read_back(*p)).collect::<Result<_, _>>()?,
            ));
        }
        Ok(match self.val(result)? {
            HostVal::Scalar(v) => v,
            HostVal::Exist(data, len) => {
                // Only the elements the length counts cross to the host.
                let Type::Exists(elem) = &hp.slots[result] else {
                    return Err(Error::plain("internal: a filter result's slot is not existential"));
                };
                // Elements that are arrays (a filter of rows) are rows of their scalars: the
                // dimensions go with the count (decoding a row as one element gave empty
                // rows; difffuzz seed 2800 on the H200, cases 1903 and 14357).
                let (inner, leaf) = shape(elem, &inputs.sizes)?;
                let esz = layout(&leaf).0 * inner.iter().product::<usize>();
                let n = read_int(&self.session, Some(len))?;
                let cap = self.session.bytes_of(data) / esz.max(1);
                let n = usize::try_from(n).unwrap_or(0).min(cap);
                let bytes = self.session.read_resident(data, 0, n * esz).map_err(run_error)?;
                let dims: Vec<usize> = std::iter::once(n).chain(inner).collect();
                decode_dims(&bytes, &dims, &leaf)
            }
            HostVal::Dev(r) => {
                let t = &hp.slots[result];
                let (dims, elem) = shape(t, &inputs.sizes)?;
                let bytes = self
                    .session
                    .read_resident(r, 0, self.session.bytes_of(r))
                    .map_err(run_error)?;
                decode_dims(&bytes, &dims, &elem)
            }
        })
    }
}
