//! Inputs and results as device-buffer bytes between ranks: rank 0 encodes each rank's slice of
//! an array input straight from its inputs into the layout of the device buffer that holds it
//! (`lift_data::layout`, as one process encodes its whole input), the bytes travel, and each
//! rank uploads them as they are ([`lift_runtime::Resident::with_bytes`]); its part of the
//! result comes back as the result buffer's bytes, which rank 0 decodes once, whole. No rank
//! makes interpreter values of what it receives or sends.

use super::exec::status;
use super::transport::Comm;
use crate::run::take;
use crate::*;
use ir::interp::Value;
use ir::Type;
use lift_compile::Error;
use lift_data::Inputs;
use lift_runtime::ParamData;
use std::collections::BTreeMap;
use std::ops::Range;

/// Whether a value of type `t` lives in one buffer of fixed-size elements (no filter result,
/// no function): what the byte path carries.
pub(super) fn flat(t: &Type) -> bool {
    match t {
        Type::Array(e, _) => flat(e),
        Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => true,
        Type::Exists(_) | Type::Fun(..) => false,
    }
}

/// The bytes of a buffer holding a value of type `t` at `sizes`.
pub(super) fn buffer_bytes(t: &Type, sizes: &BTreeMap<String, i64>) -> Result<usize, Error> {
    match t {
        Type::Array(e, n) => {
            let n = n
                .eval(&|v| sizes.get(v).copied())
                .map_err(|e| Error::plain(format!("internal: a length {n}: {e}")))?;
            Ok(usize::try_from(n).unwrap_or(0) * buffer_bytes(e, sizes)?)
        }
        other => Ok(lift_data::layout::layout(other).0),
    }
}

/// Appends the bytes of rows `rows` of `v` (an array) with buffer element type `elem`: the
/// rows one after the other, as the buffer of the slice holds them.
pub(super) fn encode_rows(v: &Value, rows: Range<usize>, elem: &Type, out: &mut Vec<u8>) -> Result<(), Error> {
    match v {
        Value::Array(xs) if rows.end <= xs.len() => xs[rows]
            .iter()
            .try_for_each(|x| lift_data::layout::encode(x, elem, out))
            .map_err(|e| Error::plain(e.to_string())),
        _ => Err(Error::plain("internal: rows beyond an input")),
    }
}

/// The bytes of the slice program's parameter `t` (of type `ty`) for the slice `r`: a cut of
/// rows straight from the given value; another cut (a layout made first, a set of columns)
/// through its value.
fn take_bytes(t: &Take, ty: &Type, inputs: &Inputs, r: &Range<usize>) -> Result<Vec<u8>, Error> {
    let elem = lift_runtime::elem_of(ty);
    let mut out = vec![];
    match t {
        Take::Cut {
            param,
            dim: 0,
            window: (size, step),
            pre: None,
        } => {
            let read = if r.is_empty() {
                0..0
            } else {
                r.start * step..(r.end - 1) * step + size
            };
            encode_rows(&inputs.values[*param], read, &elem, &mut out)?;
        }
        Take::Whole(_) | Take::Cut { .. } => {
            let v = take(t, &|k| &inputs.values[k], &inputs.sizes, r)?;
            lift_data::layout::encode(&v, &elem, &mut out).map_err(|e| Error::plain(e.to_string()))?;
        }
    }
    Ok(out)
}

/// Sends each rank its slice program's parameters that `skip` does not take, as buffer bytes
/// (arrays) or values (scalars): whole ones broadcast, cut ones scattered (rank 0 encodes every
/// rank's slice; its own stays here); a parameter the program never reads is made as zero
/// bytes on each rank. `None` in the place of the skipped.
pub(super) fn distribute(
    comm: &Comm,
    split: &Split,
    at: &Inputs,
    given: Option<&Inputs>,
    ranges: &[Range<usize>],
    skip: &dyn Fn(&Take) -> bool,
) -> Result<Vec<Option<ParamData>>, Error> {
    let unread = super::unread(split)?;
    let slice = ir::parse(&split.slice_src)?;
    let mut sizes = at.sizes.clone();
    sizes.insert(split.part.clone(), ranges[comm.rank].len() as i64);
    let mut values = vec![];
    for (j, t) in split.params.iter().enumerate() {
        let ty = &slice.params[j].ty;
        if skip(t) {
            values.push(None);
            continue;
        }
        let array = matches!(ty, Type::Array(..));
        if unread[j] && array {
            values.push(Some(ParamData::Bytes(vec![0u8; buffer_bytes(ty, &sizes)?])));
            continue;
        }
        let value = match t {
            // (a scalar, or an array the program reads whole: the same bytes on every rank)
            Take::Whole(k) if !array => {
                let mine = given.map(|ins| super::wire::to_bytes(&ins.values[*k])).transpose();
                let bytes = comm.broadcast(comm.agree(mine)?)?;
                match given {
                    Some(ins) => ParamData::Value(ins.values[*k].clone()),
                    None => ParamData::Value(super::wire::from_bytes(&bytes)?),
                }
            }
            Take::Whole(_) => {
                let mine = given.map(|ins| take_bytes(t, ty, ins, &ranges[0])).transpose();
                ParamData::Bytes(comm.broadcast(comm.agree(mine)?)?)
            }
            Take::Cut { .. } => {
                let mut own = None;
                let parts = given
                    .map(|ins| {
                        ranges
                            .iter()
                            .enumerate()
                            .map(|(rank, r)| {
                                let b = take_bytes(t, ty, ins, r)?;
                                if rank == comm.rank {
                                    own = Some(b);
                                    return Ok(vec![]);
                                }
                                Ok(b)
                            })
                            .collect::<Result<Vec<_>, Error>>()
                    })
                    .transpose();
                let parts = comm.agree(parts)?;
                let bytes = comm.scatter(parts)?;
                ParamData::Bytes(own.unwrap_or(bytes))
            }
        };
        values.push(Some(value));
    }
    Ok(values)
}

/// Every rank's part of a concatenated result as its buffer's bytes, on rank 0: the parts in
/// rank order decoded once as the whole result of type `ty` at `sizes` (`None` elsewhere).
/// A rank's failure is every rank's error.
pub(super) fn gather_bytes(
    comm: &Comm,
    part: Option<Result<Vec<u8>, Error>>,
    ty: &Type,
    sizes: &BTreeMap<String, i64>,
) -> Result<Option<Value>, Error> {
    let mine = match part {
        None => vec![2],
        Some(Ok(b)) => [&[0u8][..], &b].concat(),
        Some(Err(e)) => status(Some(Err(e))),
    };
    let Some(all) = comm.gather(&mine)? else {
        return Ok(None);
    };
    let failures: Vec<(usize, String)> = all
        .iter()
        .enumerate()
        .filter(|(_, b)| b.first() == Some(&1))
        .map(|(r, b)| (r, String::from_utf8_lossy(&b[1..]).into_owned()))
        .collect();
    if !failures.is_empty() {
        return Err(comm.failed(failures));
    }
    let mut whole = Vec::with_capacity(all.iter().map(Vec::len).sum());
    for b in all.iter().filter(|b| b.first() == Some(&0)) {
        whole.extend_from_slice(&b[1..]);
    }
    lift_runtime::decode_as(ty, sizes, &whole).map(Some)
}

/// Whether a split runs on the byte path: its parts concatenate into a result of fixed-size
/// elements, and every parameter of its slice program is an array of such or a scalar.
pub(super) fn byte_path(split: &Split, result: &Type) -> Result<bool, Error> {
    let slice = ir::parse(&split.slice_src)?;
    Ok(matches!(split.gather, Gather::Concat) && flat(result) && slice.params.iter().all(|p| flat(&p.ty)))
}

/// This rank's slice run on its device from its parameters' bytes: the result buffer's bytes.
/// A slice program with host sections runs through values (its runtime takes values).
pub(super) fn run_slice(
    compiled: &lift_compile::Compiled,
    params: Vec<ParamData>,
    sizes: &BTreeMap<String, i64>,
    device: &str,
) -> Result<Vec<u8>, Error> {
    let ty = compiled.info.result();
    if let (Some(plan), None) = (&compiled.plan, &compiled.host) {
        let mut dev = lift_runtime::Resident::with_bytes(plan, ty, sizes, params, Some(device))?;
        return dev.launch_bytes();
    }
    let values = params
        .into_iter()
        .zip(&compiled.given.params)
        .map(|(p, decl)| match p {
            ParamData::Value(v) => Ok(v),
            ParamData::Bytes(b) => lift_runtime::decode_as(&decl.ty, sizes, &b),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ins = Inputs {
        values,
        sizes: sizes.clone(),
    };
    let v = crate::run::run_compiled_on(compiled, &ins, device, false)?.value;
    let mut out = vec![];
    lift_data::layout::encode(&v, &lift_runtime::elem_of(ty), &mut out).map_err(|e| Error::plain(e.to_string()))?;
    Ok(out)
}
