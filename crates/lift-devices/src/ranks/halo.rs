//! A host loop's steps as bytes: where each step reads the state whole (an all-gather's rows)
//! or through cuts of its rows (a `slide` below `pad`/`pad-clamp`: halo rows), the state never
//! becomes values and stays on each rank's device: after a step a rank reads back only the rows
//! other ranks read, sends them, and makes its next input on its device by a row map fixed
//! once: for each row of the input, a copy of one of its own rows from its result, a row
//! received, or the bytes of a pad's value.

use super::overlap;
use super::transport::Comm;
use crate::*;
use ir::interp::Value;
use ir::{Expr, Lit, Prim, Type};
use lift_compile::Error;
use std::collections::BTreeMap;
use std::ops::Range;

/// Where one row of a rank's input buffer comes from.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Src {
    /// This row of the state.
    Row(usize),
    /// A pad's value.
    Const(Vec<u8>),
}

/// The byte path of one rank's steps.
pub(super) struct Halo {
    /// Bytes of one row of the state.
    pub(super) row: usize,
    /// Per take of the state: the slice program's parameter and its row map.
    pub(super) cuts: Vec<(usize, Vec<Src>)>,
    /// The rows of the state this rank reads (its window).
    pub(super) window: Range<usize>,
    /// The rows of the state this rank's part is.
    pub(super) part_rows: usize,
}

/// A layout of one parameter made of pads of its rows: outermost first, each pad's left and
/// right amounts and, for `pad`, its value (`None`: `pad-clamp`).
type Pads = Vec<(usize, usize, Option<Value>)>;

fn pads(src: &str) -> Option<Pads> {
    let prog = ir::parse(src).ok()?;
    let mut e = prog.body;
    let mut out = vec![];
    loop {
        match prog.expr(e) {
            Expr::Prim {
                prim: Prim::Pad(l, r) | Prim::PadClamp(l, r),
                args,
            } => {
                let amounts = (usize::try_from(l.as_cst()?).ok()?, usize::try_from(r.as_cst()?).ok()?);
                let value = match args.as_slice() {
                    [v, _] => Some(match prog.expr(*v) {
                        Expr::Lit(l) => lit(l),
                        _ => return None,
                    }),
                    _ => None,
                };
                out.push((amounts.0, amounts.1, value));
                e = *args.last()?;
            }
            Expr::Var(v) if prog.params.first().is_some_and(|p| p.var == *v) => return Some(out),
            _ => return None,
        }
    }
}

fn lit(l: &Lit) -> Value {
    match l {
        Lit::Float(f) => Value::Float(*f),
        Lit::Double(d) => Value::Double(*d),
        Lit::Int(i) => Value::Int(*i),
        Lit::Uint(u) => Value::Uint(*u),
        Lit::Long(x) => Value::Long(*x),
        Lit::Ulong(u) => Value::Ulong(*u),
        Lit::Bool(b) => Value::Bool(*b),
    }
}

/// What row `p` of `pads` laid over a state of `n` rows is.
#[derive(Debug, PartialEq)]
enum Pick {
    Row(usize),
    Value(Value),
}

/// Row `p` of `pads` laid over a state of `n` rows: the state row it is, or a pad's value
/// (`None` beyond the padded rows).
fn source(pads: &[(usize, usize, Option<Value>)], n: usize, mut p: usize) -> Option<Pick> {
    // (the length below each pad, innermost last)
    let mut lens = vec![n];
    for (l, r, _) in pads.iter().rev() {
        lens.push(lens.last().expect("a length") + l + r);
    }
    lens.reverse();
    for (k, (l, _, value)) in pads.iter().enumerate() {
        let inner = lens[k + 1];
        let i = p as i64 - *l as i64;
        p = if (0..inner as i64).contains(&i) {
            i as usize
        } else {
            match value {
                Some(v) => return Some(Pick::Value(v.clone())),
                None => i.clamp(0, inner as i64 - 1) as usize,
            }
        };
    }
    (p < n).then_some(Pick::Row(p))
}

impl Halo {
    /// The byte path of the step `step` for this rank's slice `r` (windows `r` of the split),
    /// reading the rows `window` of a state of `n` rows of type `elem` (as a buffer holds
    /// them); `None` where a take of the state is not a cut of rows below constant pads of
    /// literal values, or the state's rows are not of one fixed size.
    pub(super) fn plan(
        step: &Split,
        state: usize,
        r: &Range<usize>,
        window: Range<usize>,
        n: usize,
        elem: &Type,
        part_rows: usize,
    ) -> Option<Halo> {
        let row = match elem {
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => lift_data::layout::layout(elem).0,
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => return None,
        };
        let mut cuts = vec![];
        for (j, t) in step.params.iter().enumerate() {
            match t {
                // (every rank's window is then the whole state: an all-gather's rows)
                Take::Whole(k) if *k == state => {
                    if window != (0..n) {
                        return None;
                    }
                    cuts.push((j, (0..n).map(Src::Row).collect()));
                }
                Take::Cut {
                    param,
                    dim,
                    window: (s, tt),
                    pre,
                } if *param == state => {
                    if *dim != 0 || r.is_empty() {
                        return None;
                    }
                    let pads = match pre {
                        Some(src) => pads(src)?,
                        None => vec![],
                    };
                    let mut map = vec![];
                    for p in r.start * tt..(r.end - 1) * tt + s {
                        map.push(match source(&pads, n, p)? {
                            Pick::Row(i) if window.contains(&i) => Src::Row(i),
                            Pick::Row(_) => return None,
                            Pick::Value(v) => {
                                let mut b = vec![];
                                lift_data::layout::encode(&v, elem, &mut b).ok()?;
                                if b.len() != row {
                                    return None;
                                }
                                Src::Const(b)
                            }
                        });
                    }
                    cuts.push((j, map));
                }
                Take::Whole(_) | Take::Cut { .. } => {}
            }
        }
        Some(Halo {
            row,
            cuts,
            window,
            part_rows,
        })
    }

    /// Between two steps: the rows of this rank's part (its last launch's result, on its
    /// device; `launched` its outcome, `None` for an empty slice) that other ranks read go to
    /// them, theirs come here, and its next inputs are made on its device: its own rows copied
    /// from its result, the rows received and the pads' values written. Every rank's status
    /// and part length first, so that a failure anywhere stops every rank here (the outer
    /// error, the same on every rank); a failure of this rank's own device is the inner one,
    /// for the next exchange to report.
    pub(super) fn exchange(
        &self,
        comm: &Comm,
        need: &[Range<usize>],
        launched: Option<&Result<(), Error>>,
        dev: Option<&mut lift_runtime::Resident>,
    ) -> Result<Result<(), Error>, Error> {
        let mine = match launched {
            Some(Ok(())) => Ok((self.part_rows as u64).to_le_bytes().to_vec()),
            Some(Err(e)) => Err(Error::plain(e.message())),
            None => Ok(0u64.to_le_bytes().to_vec()),
        };
        let lens: Vec<usize> = comm
            .agree_gather(mine)?
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
        let own = owned[me].clone();
        // This rank's rows `o` (of its own), read from its device.
        let read = |dev: &Option<&mut lift_runtime::Resident>, o: &Range<usize>| match dev {
            Some(d) if !o.is_empty() => d.read_result((o.start - own.start) * self.row, o.len() * self.row),
            _ => Ok(vec![]),
        };
        let total = owned.last().map_or(0, |o| o.end);
        let (received, got) = if need.iter().all(|w| w.is_empty() || *w == (0..total)) {
            // Every rank reads the whole state (n-body): one MPI_Allgatherv of the parts.
            let all = comm.all_gather(&comm.agree(read(&dev, &own))?)?;
            let from: Vec<usize> = (0..comm.size).filter(|&j| j != me && !owned[j].is_empty()).collect();
            let got = from.iter().map(|&j| all[j].clone()).collect();
            (from.iter().map(|&j| owned[j].clone()).collect::<Vec<_>>(), got)
        } else {
            let mut sends = vec![];
            for (r, want) in need.iter().enumerate() {
                let o = overlap(want, &own);
                if r != me && !o.is_empty() {
                    sends.push((r, read(&dev, &o)));
                }
            }
            let sends = comm.agree(
                sends
                    .into_iter()
                    .map(|(r, b)| b.map(|b| (r, b)))
                    .collect::<Result<Vec<_>, Error>>(),
            )?;
            let from: Vec<usize> = (0..comm.size)
                .filter(|&j| j != me && !overlap(&need[me], &owned[j]).is_empty())
                .collect();
            let got = comm.exchange(&sends, &from)?;
            (from.iter().map(|&j| overlap(&need[me], &owned[j])).collect(), got)
        };
        let Some(dev) = dev else { return Ok(Ok(())) };
        Ok(self.upload(dev, &own, &received, &got))
    }

    /// This rank's next inputs on its device: per row of each, a copy of its own row `own`
    /// from its result, a row of `got` (rows `received`, from other ranks) or a pad's value;
    /// consecutive rows of one kind go in one copy or one write.
    fn upload(
        &self,
        dev: &mut lift_runtime::Resident,
        own: &Range<usize>,
        received: &[Range<usize>],
        got: &[Vec<u8>],
    ) -> Result<(), Error> {
        let row = self.row;
        for (j, map) in &self.cuts {
            // (a pending device copy: from, to, length; a pending write: at, bytes)
            let mut copy: Option<(usize, usize, usize)> = None;
            let mut write: Option<(usize, Vec<u8>)> = None;
            for (p, src) in map.iter().enumerate() {
                // (`Err`: own row `i`, copied on the device; `Ok`: bytes from the host)
                let host: Result<&[u8], usize> = match src {
                    Src::Row(i) if own.contains(i) => Err(*i),
                    Src::Row(i) => {
                        let k = received
                            .iter()
                            .position(|r| r.contains(i))
                            .ok_or_else(|| Error::plain("internal: a row that no rank sent"))?;
                        let at = (i - received[k].start) * row;
                        Ok(got[k]
                            .get(at..at + row)
                            .ok_or_else(|| Error::plain("internal: rows received cut short"))?)
                    }
                    Src::Const(b) => Ok(b),
                };
                match host {
                    Err(i) => {
                        let from = (i - own.start) * row;
                        if let Some((at, b)) = write.take() {
                            dev.write_param_at(*j, at, &b)?;
                        }
                        copy = match copy {
                            Some((f, t, l)) if f + l == from && t + l == p * row => Some((f, t, l + row)),
                            Some((f, t, l)) => {
                                dev.copy_result_to_param(*j, f, t, l)?;
                                Some((from, p * row, row))
                            }
                            None => Some((from, p * row, row)),
                        };
                    }
                    Ok(bytes) => {
                        if let Some((f, t, l)) = copy.take() {
                            dev.copy_result_to_param(*j, f, t, l)?;
                        }
                        match &mut write {
                            Some((_, b)) => b.extend_from_slice(bytes),
                            None => write = Some((p * row, bytes.to_vec())),
                        }
                    }
                }
            }
            if let Some((f, t, l)) = copy {
                dev.copy_result_to_param(*j, f, t, l)?;
            }
            if let Some((at, b)) = write {
                dev.write_param_at(*j, at, &b)?;
            }
        }
        Ok(())
    }

    /// The step's inputs that read the state (parameter, bytes), made from the bytes of this
    /// rank's window of the state by the row map.
    pub(super) fn inputs(&self, window: &[u8]) -> Result<Vec<(usize, Vec<u8>)>, Error> {
        let w = &self.window;
        if window.len() != w.len() * self.row {
            return Err(Error::plain("internal: a window of the state of another length"));
        }
        Ok(self
            .cuts
            .iter()
            .map(|(j, map)| {
                let mut input = Vec::with_capacity(map.len() * self.row);
                for src in map {
                    match src {
                        Src::Row(i) => {
                            input.extend_from_slice(&window[(i - w.start) * self.row..(i - w.start + 1) * self.row])
                        }
                        Src::Const(b) => input.extend_from_slice(b),
                    }
                }
                (*j, input)
            })
            .collect())
    }
}

/// The rows of the result of a step's slice program at these sizes (its outer length).
pub(super) fn result_rows(t: &Type, sizes: &BTreeMap<String, i64>) -> Option<usize> {
    match t {
        Type::Array(_, n) => usize::try_from(n.eval(&|v| sizes.get(v).copied()).ok()?).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_row_comes_from_its_clamped_row_or_the_pads_value() {
        let clamp: Pads = vec![(1, 1, None)];
        assert_eq!(source(&clamp, 5, 0), Some(Pick::Row(0)));
        assert_eq!(source(&clamp, 5, 1), Some(Pick::Row(0)));
        assert_eq!(source(&clamp, 5, 6), Some(Pick::Row(4)));
        let zero: Pads = vec![(2, 1, Some(Value::Float(0.0)))];
        assert_eq!(source(&zero, 5, 1), Some(Pick::Value(Value::Float(0.0))));
        assert_eq!(source(&zero, 5, 2), Some(Pick::Row(0)));
        assert_eq!(source(&zero, 5, 7), Some(Pick::Value(Value::Float(0.0))));
        // A clamp of a padded array clamps to the pad's rows.
        let both: Pads = vec![(1, 1, None), (1, 1, Some(Value::Float(9.0)))];
        assert_eq!(source(&both, 3, 0), Some(Pick::Value(Value::Float(9.0))));
        assert_eq!(source(&both, 3, 2), Some(Pick::Row(0)));
        // Without pads, a row beyond the state is no row.
        assert_eq!(source(&[], 3, 3), None);
    }
}
