//! A host loop over MPI ranks: every rank keeps its step's program resident on its device;
//! between steps a rank receives only the rows of the new state its next step reads
//! ([`super::state_reads`]): all of them (all-gather) or its neighbours' halo rows. Halo rows
//! of a state read through pads go as bytes ([`super::halo`]) where every rank can; otherwise
//! (and for the first step everywhere) the rows are values.

use super::exec::{distribute, parts, ranges, slice_of, status, Probe};
use super::transport::Comm;
use super::{needs, overlap, state_reads, wire, Reads};
use crate::run::*;
use crate::*;
use ir::interp::Value;
use lift_compile::Error;
use lift_data::Inputs;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Instant;

/// A host loop: every rank keeps its step resident; between steps the state's rows that each
/// rank's next step reads reach it (all-gather, or halo rows from the ranks that computed
/// them); after the last step the parts are gathered on rank 0.
pub(super) fn loop_run(
    comm: &Comm,
    device: &str,
    src: &str,
    hl: &HostLoop,
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
    let step_inputs = given.map(|ins| {
        let mut values = ins.values.clone();
        values.push(ins.values[hl.init].clone());
        Inputs {
            values,
            sizes: ins.sizes.clone(),
        }
    });
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
    let reads_state = |t: &Take| matches!(t, Take::Whole(p) | Take::Cut { param: p, .. } if *p == state);
    // The state's length: rank 0 knows it.
    let n_state = comm.broadcast(step_inputs.as_ref().map(|ins| match &ins.values[state] {
        Value::Array(xs) => (xs.len() as u64).to_le_bytes().to_vec(),
        _ => 0u64.to_le_bytes().to_vec(),
    }))?;
    let n_state = u64::from_le_bytes(
        n_state
            .try_into()
            .map_err(|_| Error::plain("internal: a state length"))?,
    ) as usize;
    let need = needs(&reads, &ranges, n_state);
    let t0 = Instant::now();
    let fixed = distribute(comm, step, at, step_inputs.as_ref(), &ranges, &reads_state)?;
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
    let mut local = vec![Value::Array(vec![]); n_state];
    put(&mut local, need[comm.rank].start, first_rows)?;
    let r = ranges[comm.rank].clone();
    let mine = !r.is_empty();
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
    let mut dev = None;
    if mine {
        let made = (|| {
            let mut values: Vec<Option<Value>> = fixed.clone();
            for (j, v) in state_values(&local)? {
                values[j] = Some(v);
            }
            let ins = slice_of(step, values.into_iter().flatten().collect(), at, &r);
            let mut c = compile_for(&step.slice_src, &ins, device, None)?;
            if forced_failure(comm.rank) {
                if let Some(plan) = c.plan.as_mut() {
                    plan.source
                        .push_str("\n#error \"a failure forced by LIFT_DEVICES_FAIL\"\n");
                }
            }
            let plan = c
                .plan
                .as_ref()
                .ok_or_else(|| Error::plain("internal: a step without kernels"))?;
            let rows = super::halo::result_rows(c.info.result(), &ins.sizes);
            Ok((
                lift_runtime::Resident::new(plan, c.info.result(), &ins, Some(device))?,
                rows,
            ))
        })();
        dev = Some(made);
    }
    let (mut dev, part_rows) = match dev {
        Some(made) => {
            let (d, rows) = comm.agree(made)?;
            (Some(d), rows)
        }
        None => {
            comm.agree(Ok(()))?;
            (None, Some(0))
        }
    };
    // The byte path where every rank can take it (a rank without a slice can: it only takes
    // part in the exchanges).
    let halo = match (&reads, reduced, state_ty, part_rows) {
        (Reads::Rows(_), false, ir::Type::Array(elem, _), Some(rows)) if mine => {
            super::halo::Halo::plan(step, state, &r, w.clone(), n_state, elem, rows)
        }
        _ => None,
    };
    let able = (halo.is_some() || !mine) && matches!(reads, Reads::Rows(_)) && !reduced;
    let all_able = comm.all_gather(&[u8::from(able)])?.iter().all(|b| b == &[1]);
    let halo = if all_able {
        Some(halo.unwrap_or(super::halo::Halo {
            row: 0,
            cuts: vec![],
            window: 0..0,
            part_rows: 0,
        }))
    } else {
        None
    };
    let t_build = t0.elapsed();
    let mut exchanged = std::time::Duration::ZERO;
    let mut part = None;
    let mut out = None;
    for s in 0..k {
        let last = s + 1 == k;
        if s > 0 {
            let t = Instant::now();
            let uploaded = match &halo {
                Some(h) => h.exchange(comm, &need, out.take(), dev.as_mut())?,
                None => exchange(comm, step, &reads, &need, part.take(), &mut local).map(|()| Ok(()))?,
            };
            exchanged += t.elapsed();
            if let Err(e) = uploaded {
                // (reported by the next exchange, or the gather after the last step)
                out = Some(Err(Error::plain(e.message())));
                part = Some(Err(e));
                continue;
            }
        }
        match (&halo, dev.as_mut()) {
            (Some(_), Some(d)) if last => part = Some(d.launch()),
            (Some(_), Some(d)) => out = Some(d.launch_bytes()),
            (None, Some(d)) => {
                part = Some(state_values(&local).and_then(|vs| {
                    vs.iter().try_for_each(|(j, v)| d.set(*j, v))?;
                    d.launch()
                }))
            }
            (_, None) => {}
        }
    }
    let t = Instant::now();
    let gathered = comm.gather(&status(part))?;
    let timing = format!(
        "rank {} ({}): slice {}..{}; inputs to the ranks {:.3} ms, its step built {:.3} ms, {k} steps' exchanges ({}) \
         {:.3} ms, last parts to rank 0 {:.3} ms\n",
        comm.rank,
        comm.devices[comm.rank],
        r.start,
        r.end,
        t_in.as_secs_f64() * 1e3,
        t_build.as_secs_f64() * 1e3,
        if halo.is_some() {
            "halo rows as bytes"
        } else {
            "rows as values"
        },
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
