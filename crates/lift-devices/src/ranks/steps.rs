//! A host loop over MPI ranks: every rank keeps its step's program resident on its device;
//! between steps a rank receives only the rows of the new state its next step reads
//! ([`super::state_reads`]): all of them (all-gather) or its neighbours' halo rows. Where every
//! rank's step reads the state whole or through pads of its rows, the state is bytes from the
//! first step's input to the last step's part and stays on the ranks' devices in between
//! ([`super::halo`]); otherwise (a reduction's
//! partials, a transposed cut) its rows travel as values. A convergence loop
//! ([`super::Until`]) tests each rank's own rows after each step and leaves when the all-reduce
//! of the ranks' verdicts says every rank's hold.

use super::bytes::{distribute as distribute_bytes, encode_rows, gather_bytes};
use super::exec::{distribute, parts, ranges, slice_of, status, Probe};
use super::halo::Halo;
use super::transport::Comm;
use super::{needs, overlap, state_reads, wire, Reads, Until};
use crate::run::*;
use crate::*;
use ir::interp::Value;
use lift_compile::{Compiled, Error};
use lift_data::Inputs;
use lift_runtime::{ParamData, Resident};
use mpi::collective::SystemOperation;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::{Duration, Instant};

/// What every rank knows of a loop before its steps run.
struct Setup<'a> {
    hl: &'a HostLoop,
    state: usize,
    ranges: Vec<Range<usize>>,
    need: Vec<Range<usize>>,
    reads: Reads,
    n_state: usize,
    /// This rank's slice program's sizes.
    sizes: BTreeMap<String, i64>,
}

/// A host loop: every rank keeps its step resident; between steps the state's rows that each
/// rank's next step reads reach it (all-gather, or halo rows from the ranks that computed
/// them); after the last step the parts are gathered on rank 0. With `until`, the loop ends
/// at the first step whose convergence test holds on every rank.
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_run(
    comm: &Comm,
    device: &str,
    src: &str,
    hl: &HostLoop,
    until: Option<&Until>,
    (state, state_ty): (usize, &ir::Type),
    at: &Inputs,
    given: Option<&Inputs>,
) -> Result<(Option<Value>, String), Error> {
    let k = hl
        .steps
        .eval(&|n| at.sizes.get(n).copied())
        .map_err(|e| Error::plain(format!("cannot evaluate the number of steps {}: {e}", hl.steps)))?;
    if k == 0 {
        return Ok((given.map(|ins| ins.values[hl.init].clone()), String::new()));
    }
    let step = &hl.step;
    let ranges = ranges(
        comm,
        &Probe {
            src,
            init: Some(hl.init),
        },
        step,
        at,
        device,
    )?;
    let reduced = matches!(step.gather, Gather::Reduce { .. });
    let reads = if reduced {
        Reads::Whole("a reduction's partials".into())
    } else {
        state_reads(step, state)
    };
    // The state's length: rank 0 knows it.
    let n_state = comm.broadcast(given.map(|ins| match &ins.values[hl.init] {
        Value::Array(xs) => (xs.len() as u64).to_le_bytes().to_vec(),
        _ => 0u64.to_le_bytes().to_vec(),
    }))?;
    let n_state = u64::from_le_bytes(
        n_state
            .try_into()
            .map_err(|_| Error::plain("internal: a state length"))?,
    ) as usize;
    let need = needs(&reads, &ranges, n_state);
    let r = ranges[comm.rank].clone();
    let mut sizes = at.sizes.clone();
    sizes.insert(step.part.clone(), r.len() as i64);
    let t0 = Instant::now();
    // Compiled first (the sizes are all it needs): its result's rows decide the byte path.
    // (rank 0 alone explores where every rank has its device: [`super::compile::share_variant`])
    let shared = super::compile::same_devices(comm) && !ranges[0].is_empty();
    let compiled = (!r.is_empty() && (comm.is_root() || !shared)).then(|| {
        let ins = Inputs {
            values: vec![],
            sizes: sizes.clone(),
        };
        compile_for(&step.slice_src, &ins, device, None)
    });
    let compiled = if shared {
        super::compile::share_variant(comm, compiled, &step.slice_src, &sizes, device, None, !r.is_empty())?
    } else {
        compiled
    };
    let compiled = compiled.map(|c| {
        c.map(|mut c| {
            if forced_failure(comm.rank) {
                if let Some(plan) = c.plan.as_mut() {
                    plan.source
                        .push_str("\n#error \"a failure forced by LIFT_DEVICES_FAIL\"\n");
                }
            }
            c
        })
    });
    let compiled = comm.agree(compiled.transpose())?;
    let part_rows = compiled
        .as_ref()
        .map_or(Some(0), |c| super::halo::result_rows(c.info.result(), &sizes));
    let halo = match (reduced, state_ty, part_rows, &compiled) {
        (false, ir::Type::Array(elem, _), Some(rows), Some(_)) => {
            Halo::plan(step, state, &r, need[comm.rank].clone(), n_state, elem, rows)
        }
        _ => None,
    };
    let able = (halo.is_some() || compiled.is_none()) && !reduced;
    let all_able = comm.all_gather(&[u8::from(able)])?.iter().all(|b| b == &[1]);
    let t_build = t0.elapsed();
    let setup = Setup {
        hl,
        state,
        ranges,
        need,
        reads,
        n_state,
        sizes,
    };
    match (all_able, until) {
        (true, _) => {
            let halo = halo.unwrap_or(Halo {
                row: 0,
                cuts: vec![],
                window: 0..0,
                part_rows: 0,
            });
            byte_loop(
                comm, device, &setup, compiled, halo, until, k, state_ty, at, given, t_build,
            )
        }
        (false, Some(_)) => {
            // (a convergence loop whose state travels as values: rank 0 runs it whole)
            let part = given.map(|ins| run_on(src, ins, device, false).map(|p| p.value));
            let value = comm.agree(part.transpose())?;
            Ok((
                value,
                format!(
                    "rank {}: the convergence loop ran whole on rank 0 (its state's rows cannot travel as bytes)\n",
                    comm.rank
                ),
            ))
        }
        (false, None) => value_loop(comm, device, &setup, compiled, k, at, given, t_build),
    }
}

/// A loop whose state is bytes throughout.
#[allow(clippy::too_many_arguments)]
fn byte_loop(
    comm: &Comm,
    device: &str,
    setup: &Setup,
    compiled: Option<Compiled>,
    halo: Halo,
    until: Option<&Until>,
    k: i64,
    state_ty: &ir::Type,
    at: &Inputs,
    given: Option<&Inputs>,
    t_build: Duration,
) -> Result<(Option<Value>, String), Error> {
    let (hl, state, need) = (setup.hl, setup.state, &setup.need);
    let r = &setup.ranges[comm.rank];
    let t0 = Instant::now();
    let reads_state = |t: &Take| matches!(t, Take::Whole(p) | Take::Cut { param: p, .. } if *p == state);
    let fixed = distribute_bytes(comm, &hl.step, at, given, &setup.ranges, &reads_state)?;
    let elem = lift_runtime::elem_of(state_ty);
    // Rank 0 encodes each rank's rows of the first state: those its step reads and, for a
    // convergence test, its own.
    let rows_of = |want: &[Range<usize>]| -> Result<Vec<u8>, Error> {
        let parts = given
            .map(|ins| {
                want.iter()
                    .map(|w| {
                        let mut b = vec![];
                        encode_rows(&ins.values[hl.init], w.clone(), &elem, &mut b)?;
                        Ok(b)
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .transpose();
        comm.scatter(comm.agree(parts)?)
    };
    let window = rows_of(need)?;
    let mut test = match until {
        Some(u) => {
            let rows: Vec<u64> = comm
                .all_gather(&(halo.part_rows as u64).to_le_bytes())?
                .iter()
                .map(|b| b.as_slice().try_into().map_or(0, u64::from_le_bytes))
                .collect();
            let mut at_row = 0usize;
            let owned: Vec<Range<usize>> = rows
                .iter()
                .map(|&n| {
                    at_row += n as usize;
                    at_row - n as usize..at_row
                })
                .collect();
            Some(Test::new(comm, u, rows_of(&owned)?, halo.part_rows, at, device)?)
        }
        None => None,
    };
    let t_in = t0.elapsed();
    let t0 = Instant::now();
    let made = compiled.map(|c| {
        let mut params = fixed;
        for (j, b) in halo.inputs(&window)? {
            params[j] = Some(ParamData::Bytes(b));
        }
        let params = params
            .into_iter()
            .map(|p| p.ok_or_else(|| Error::plain("internal: a step's parameter without a value")))
            .collect::<Result<Vec<_>, _>>()?;
        let plan = c
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a step without kernels"))?;
        Resident::with_bytes(plan, c.info.result(), &setup.sizes, params, Some(device))
    });
    let mut dev = comm.agree(made.transpose())?;
    let t_build = t_build + t0.elapsed();
    let (mut exchanged, mut tested) = (Duration::ZERO, Duration::ZERO);
    // (each step's result stays on the device; only a convergence test and the gather after
    // the last step read it whole)
    let mut launched: Option<Result<(), Error>> = None;
    let mut ran = 0;
    for s in 0..k {
        let mut launch = true;
        if s > 0 {
            let t = Instant::now();
            if let Err(e) = halo.exchange(comm, need, launched.as_ref(), dev.as_mut())? {
                // (reported by the next exchange, test or the gather after the last step)
                launched = Some(Err(e));
                launch = false;
            }
            exchanged += t.elapsed();
        }
        if let (Some(d), true) = (dev.as_mut(), launch) {
            launched = Some(d.launch_resident());
        }
        ran = s + 1;
        if let Some(test) = test.as_mut() {
            let t = Instant::now();
            let next = whole_part(dev.as_ref(), launched.as_ref());
            let done = test.holds(comm, next.as_ref(), device)?;
            tested += t.elapsed();
            if done {
                break;
            }
        }
    }
    let t = Instant::now();
    let out = whole_part(dev.as_ref(), launched.as_ref());
    let value = gather_bytes(comm, out, state_ty, &at.sizes)?;
    let timing = format!(
        "rank {} ({}): slice {}..{}; inputs to the ranks {:.3} ms, its step built {:.3} ms, {ran} steps' exchanges \
         ({}) {:.3} ms{}, last parts to rank 0 {:.3} ms\n",
        comm.rank,
        comm.devices[comm.rank],
        r.start,
        r.end,
        t_in.as_secs_f64() * 1e3,
        t_build.as_secs_f64() * 1e3,
        match setup.reads {
            Reads::Rows(_) => "halo rows as bytes",
            Reads::Whole(_) => "the whole state as bytes",
        },
        exchanged.as_secs_f64() * 1e3,
        if test.is_some() {
            format!(
                ", {ran} convergence tests (its rows, then an all-reduce) {:.3} ms",
                tested.as_secs_f64() * 1e3
            )
        } else {
            String::new()
        },
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok((value, timing))
}

/// This rank's whole part of the state after a step that ended `launched` (`None`: no slice).
fn whole_part(dev: Option<&Resident>, launched: Option<&Result<(), Error>>) -> Option<Result<Vec<u8>, Error>> {
    match (dev, launched) {
        (Some(d), Some(Ok(()))) => Some(d.read_result(0, d.result_len())),
        (_, Some(Err(e))) => Some(Err(Error::plain(e.message()))),
        (None, _) | (_, None) => None,
    }
}

/// A convergence loop's test on one rank: its condition compiled for its own rows, kept on
/// its device, run on its rows of the previous and the new state after each step.
struct Test {
    compiled: Option<Compiled>,
    dev: Option<Resident>,
    sizes: BTreeMap<String, i64>,
    /// This rank's rows of the state before the step.
    prev: Vec<u8>,
}

impl Test {
    fn new(comm: &Comm, u: &Until, prev: Vec<u8>, rows: usize, at: &Inputs, device: &str) -> Result<Test, Error> {
        let mut sizes = at.sizes.clone();
        sizes.insert(u.size.clone(), rows as i64);
        let compiled = (rows > 0)
            .then(|| {
                let ins = Inputs {
                    values: vec![],
                    sizes: sizes.clone(),
                };
                compile_for(&u.cond, &ins, device, None)
            })
            .transpose();
        Ok(Test {
            compiled: comm.agree(compiled)?,
            dev: None,
            sizes,
            prev,
        })
    }

    /// Whether the condition holds on every rank after a step whose part here is `next`
    /// (`None`: no rows here, where it holds): one all-reduce (MPI_MIN) of each rank's
    /// verdict, which also says whether any rank failed; the failures are then every rank's
    /// error.
    fn holds(&mut self, comm: &Comm, next: Option<&Result<Vec<u8>, Error>>, device: &str) -> Result<bool, Error> {
        let mine = match (next, &self.compiled) {
            (None, _) | (_, None) => Ok(true),
            (Some(Err(e)), _) => Err(Error::plain(e.message())),
            (Some(Ok(next)), Some(c)) => run_test(&mut self.dev, c, &self.sizes, &self.prev, next, device),
        };
        let verdict: i32 = match &mine {
            Ok(true) => 2,
            Ok(false) => 1,
            Err(_) => 0,
        };
        let least = comm.reduce(verdict, SystemOperation::min(), true).unwrap_or(0);
        if least == 0 {
            comm.agree(mine)?;
            return Err(Error::plain(
                "internal: a failed convergence test that no rank reported",
            ));
        }
        if let Some(Ok(next)) = next {
            self.prev.clone_from(next);
        }
        Ok(least == 2)
    }
}

/// The test on this rank's rows `prev` and `next`, its program made resident on the first.
fn run_test(
    dev: &mut Option<Resident>,
    c: &Compiled,
    sizes: &BTreeMap<String, i64>,
    prev: &[u8],
    next: &[u8],
    device: &str,
) -> Result<bool, Error> {
    {
        let dev = match dev.as_mut() {
            Some(d) => {
                for (k, b) in [(0, prev), (1, next)] {
                    if d.reads_param(k) {
                        d.upload_param(k, b)?;
                    }
                }
                d
            }
            None => {
                let plan = c
                    .plan
                    .as_ref()
                    .ok_or_else(|| Error::plain("internal: a convergence test without kernels"))?;
                let params = vec![ParamData::Bytes(prev.to_vec()), ParamData::Bytes(next.to_vec())];
                dev.insert(Resident::with_bytes(
                    plan,
                    c.info.result(),
                    sizes,
                    params,
                    Some(device),
                )?)
            }
        };
        match dev.launch()? {
            Value::Array(xs) if matches!(xs.as_slice(), [Value::Bool(_)]) => Ok(xs[0] == Value::Bool(true)),
            _ => Err(Error::plain("internal: a convergence test's result is not one boolean")),
        }
    }
}

/// A loop whose state's rows travel as values (a reduction's partials, a transposed cut).
#[allow(clippy::too_many_arguments)]
fn value_loop(
    comm: &Comm,
    device: &str,
    setup: &Setup,
    compiled: Option<Compiled>,
    k: i64,
    at: &Inputs,
    given: Option<&Inputs>,
    t_build: Duration,
) -> Result<(Option<Value>, String), Error> {
    let (hl, state, need, reads) = (setup.hl, setup.state, &setup.need, &setup.reads);
    let step = &hl.step;
    let r = setup.ranges[comm.rank].clone();
    let step_inputs = given.map(|ins| {
        let mut values = ins.values.clone();
        values.push(ins.values[hl.init].clone());
        Inputs {
            values,
            sizes: ins.sizes.clone(),
        }
    });
    let reads_state = |t: &Take| matches!(t, Take::Whole(p) | Take::Cut { param: p, .. } if *p == state);
    let t0 = Instant::now();
    let fixed = distribute(comm, step, at, step_inputs.as_ref(), &setup.ranges, &reads_state)?;
    // Each rank's copy of the state: full length, only the rows its steps read are current
    // (the others are never read: `need` is every row its takes read).
    let first_rows = {
        let parts = step_inputs
            .as_ref()
            .map(|ins| match &ins.values[state] {
                Value::Array(xs) => need
                    .iter()
                    .map(|w| wire::to_bytes(&Value::Array(xs[w.clone()].to_vec())))
                    .collect(),
                _ => Err(Error::plain("internal: a host loop's state is not an array")),
            })
            .transpose();
        let parts = comm.agree(parts)?;
        wire::from_bytes(&comm.scatter(parts)?)?
    };
    let mut local = vec![Value::Array(vec![]); setup.n_state];
    put(&mut local, need[comm.rank].start, first_rows)?;
    let w = need[comm.rank].clone();
    let state_values = |local: &[Value]| -> Result<Vec<(usize, Value)>, Error> {
        // Only the rows it reads: the rest of `local` is not current.
        let rows = Value::Array(local[w.clone()].to_vec());
        step.params
            .iter()
            .enumerate()
            .filter(|(_, t)| reads_state(t))
            .map(|(j, t)| cut_rows(t, &rows, w.start, &r, &at.sizes).map(|v| (j, v)))
            .collect()
    };
    let t_in = t0.elapsed();
    let t0 = Instant::now();
    // Built on the first step's inputs, with the rows of the state its part is.
    let made = compiled.map(|c| {
        let mut values: Vec<Option<Value>> = fixed.clone();
        for (j, v) in state_values(&local)? {
            values[j] = Some(v);
        }
        let ins = slice_of(step, values.into_iter().flatten().collect(), at, &r);
        let plan = c
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a step without kernels"))?;
        Resident::new(plan, c.info.result(), &ins, Some(device))
    });
    let mut dev = comm.agree(made.transpose())?;
    let t_build = t_build + t0.elapsed();
    let mut exchanged = Duration::ZERO;
    let mut part = None;
    for s in 0..k {
        if s > 0 {
            let t = Instant::now();
            exchange(comm, step, reads, need, part.take(), &mut local)?;
            exchanged += t.elapsed();
        }
        if let Some(d) = dev.as_mut() {
            part = Some(state_values(&local).and_then(|vs| {
                vs.iter().try_for_each(|(j, v)| d.set(*j, v))?;
                d.launch()
            }));
        }
    }
    let t = Instant::now();
    let gathered = comm.gather(&status(part))?;
    let timing = format!(
        "rank {} ({}): slice {}..{}; inputs to the ranks {:.3} ms, its step built {:.3} ms, {k} steps' exchanges (rows \
         as values) {:.3} ms, last parts to rank 0 {:.3} ms\n",
        comm.rank,
        comm.devices[comm.rank],
        r.start,
        r.end,
        t_in.as_secs_f64() * 1e3,
        t_build.as_secs_f64() * 1e3,
        exchanged.as_secs_f64() * 1e3,
        t.elapsed().as_secs_f64() * 1e3
    );
    let Some(all) = gathered else { return Ok((None, timing)) };
    let value = gather(
        step,
        parts(comm, &all, None)?,
        &Inputs {
            values: vec![],
            sizes: at.sizes.clone(),
        },
    )?;
    Ok((Some(value), timing))
}

/// What take `t` of a loop's state reads for the slice `r`, from `rows`, the state's rows from
/// `from` on (every row the take reads: [`needs`]). A cut of rows (a `slide`'s windows, below
/// pads) is made from those rows alone: its padding is the state's where they reach its ends,
/// and never read elsewhere; any other take has the whole state (`from` is 0).
fn cut_rows(
    t: &Take,
    rows: &Value,
    from: usize,
    r: &Range<usize>,
    sizes: &BTreeMap<String, i64>,
) -> Result<Value, Error> {
    match t {
        Take::Cut {
            dim: 0,
            window: (size, step),
            pre,
            ..
        } if !r.is_empty() => {
            let made;
            let laid = match pre {
                None => rows,
                Some(src) => {
                    let prog = ir::parse(src)?;
                    made = ir::interp::eval(&prog, std::slice::from_ref(rows), &|n| sizes.get(n).copied())
                        .map_err(|e| Error::plain(format!("making the state's layout on the host: {}", e.message)))?;
                    &made
                }
            };
            let (lo, hi) = (r.start * step - from, (r.end - 1) * step + size - from);
            match laid {
                Value::Array(xs) if hi <= xs.len() => Ok(Value::Array(xs[lo..hi].to_vec())),
                _ => Err(Error::plain("internal: a state's rows do not cover its cut")),
            }
        }
        _ => take(t, &|_| rows, sizes, r),
    }
}

/// Writes `rows` (an array) into `local` from row `at`.
fn put(local: &mut [Value], at: usize, rows: Value) -> Result<(), Error> {
    let Value::Array(xs) = rows else {
        return Err(Error::plain("internal: rows of a state are not an array"));
    };
    let end = at + xs.len();
    if end > local.len() {
        return Err(Error::plain("internal: rows beyond the state"));
    }
    for (slot, x) in local[at..end].iter_mut().zip(xs) {
        *slot = x;
    }
    Ok(())
}

/// Between two steps: every rank's part of the new state to the ranks whose next step reads
/// it. All-gather where every rank reads everything (or a reduction's partials, combined on
/// every rank); else the lengths first (every rank learns where each part lies, and whether
/// any rank failed), then the rows point to point.
fn exchange(
    comm: &Comm,
    step: &Split,
    reads: &Reads,
    need: &[Range<usize>],
    part: Option<Result<Value, Error>>,
    local: &mut Vec<Value>,
) -> Result<(), Error> {
    let mpi_combine = match &step.gather {
        Gather::Reduce { combine } => super::combine::of(combine),
        Gather::Concat | Gather::Finish { .. } => None,
    };
    if let Some(how) = mpi_combine {
        // (MPI_Allreduce: every rank's next step reads the combined state)
        let Some(Value::Array(xs)) = super::combine::reduce(comm, how, part, true)? else {
            return Err(Error::plain("internal: an all-reduce without its result"));
        };
        *local = xs;
        return Ok(());
    }
    if let Reads::Whole(_) = reads {
        let all = comm.all_gather(&status(part))?;
        let state = gather(
            step,
            parts(comm, &all, None)?,
            &Inputs {
                values: vec![],
                sizes: BTreeMap::new(),
            },
        )?;
        let Value::Array(xs) = state else {
            return Err(Error::plain("internal: a host loop's state is not an array"));
        };
        *local = xs;
        return Ok(());
    }
    let len = match &part {
        Some(Ok(Value::Array(xs))) => Ok(Some(xs.len())),
        Some(Ok(_)) => Err(Error::plain("internal: a part of the state is not an array")),
        Some(Err(e)) => Err(Error::plain(e.message())),
        None => Ok(None),
    };
    let mine = comm.agree(len.map(|l| l.map_or(vec![], |l| (l as u64).to_le_bytes().to_vec())))?;
    let lens: Vec<usize> = comm
        .all_gather(&mine)?
        .iter()
        .map(|b| {
            b.as_slice()
                .try_into()
                .map_or(0, |x: [u8; 8]| u64::from_le_bytes(x) as usize)
        })
        .collect();
    let mut at = 0;
    let owned: Vec<Range<usize>> = lens
        .iter()
        .map(|l| {
            at += l;
            at - l..at
        })
        .collect();
    let me = comm.rank;
    let rows = match part {
        Some(Ok(Value::Array(xs))) => xs,
        _ => vec![],
    };
    let mut sends = vec![];
    for (r, want) in need.iter().enumerate() {
        let o = overlap(want, &owned[me]);
        if r != me && !o.is_empty() {
            let slice = Value::Array(rows[o.start - owned[me].start..o.end - owned[me].start].to_vec());
            sends.push((r, wire::to_bytes(&slice)?));
        }
    }
    let from: Vec<usize> = (0..comm.size)
        .filter(|&j| j != me && !overlap(&need[me], &owned[j]).is_empty())
        .collect();
    let got = comm.exchange(&sends, &from)?;
    put(local, owned[me].start, Value::Array(rows))?;
    for (j, bytes) in from.iter().zip(got) {
        put(local, overlap(&need[me], &owned[*j]).start, wire::from_bytes(&bytes)?)?;
    }
    Ok(())
}
