//! Running one kernel plan once: inputs encoded into buffers, the kernels launched in order, the
//! result read back and decoded (its tuples of arrays zipped back from their component buffers).

use crate::launch::*;
use codegen_opencl::KernelPlan;
use host_runner::{BufferInit, BufferSpec, Plan, ReadSpec};
use ir::interp::Value;
use ir::Type;
use lift_compile::Error;
use lift_data::layout::{decode_dims, encode, layout};
use lift_data::Inputs;
use memalloc::Role;
use std::collections::BTreeMap;

/// Builds the host plan, runs it and decodes the result.
pub fn run(
    plan: &KernelPlan,
    inputs: &Inputs,
    device: Option<&str>,
    time: bool,
) -> Result<(Value, Option<String>), Error> {
    let r = run_measured(plan, inputs, device, time, 1, false)?;
    Ok((r.value, r.timing))
}

/// A run with timing details, for benchmarks.
pub struct Measured {
    /// An empty tuple where the caller asked not to decode it ([`Prepared::skip_result`]).
    pub value: Value,
    pub timing: Option<String>,
    pub device: String,
    /// Median kernel times over the repeats, per launch.
    pub kernel_ns: Vec<(String, u64)>,
    /// Bytes of all inputs, and the median time of a device-to-device copy of that many bytes.
    pub input_bytes: usize,
    pub copy_ns: Option<f64>,
}

pub fn run_measured(
    plan: &KernelPlan,
    inputs: &Inputs,
    device: Option<&str>,
    time: bool,
    repeats: usize,
    baseline: bool,
) -> Result<Measured, Error> {
    run_measured_with(plan, inputs, &Prepared::default(), device, time, repeats, baseline)
}

/// What a caller that runs many plans on the same inputs (`lift tune`) prepares once.
#[derive(Default)]
pub struct Prepared<'a> {
    /// Per parameter, its buffer's bytes where already encoded (see
    /// [`lift_data::random_inputs_lean`]): used when their length is the buffer's, so that
    /// the values of such a parameter may be left out.
    pub input_bytes: &'a [Option<Vec<u8>>],
    /// The result is not decoded into a value (`Measured::value` is then an empty tuple): a
    /// timing whose result nobody compares spares the decoding of a large output.
    pub skip_result: bool,
}

impl Prepared<'_> {
    /// Parameter `k`'s prepared bytes, where they are the `len` its buffer takes.
    pub(crate) fn bytes(&self, k: usize, len: usize) -> Option<&[u8]> {
        self.input_bytes.get(k)?.as_deref().filter(|d| d.len() == len)
    }
}

/// [`run_measured`] with what the caller prepared.
pub fn run_measured_with(
    plan: &KernelPlan,
    inputs: &Inputs,
    prepared: &Prepared,
    device: Option<&str>,
    time: bool,
    repeats: usize,
    baseline: bool,
) -> Result<Measured, Error> {
    let mut session = host_runner::Session::reuse(device).map_err(|e| Error::plain(e.to_string()))?;
    let measured = run_on(plan, inputs, prepared, &mut session, time, repeats, baseline)?;
    session.keep(device);
    Ok(measured)
}

/// [`run_measured_with`] on a session the caller holds (a host program's direct units,
/// `lift_compile::host::HostProgram::direct`).
pub(crate) fn run_on(
    plan: &KernelPlan,
    inputs: &Inputs,
    prepared: &Prepared,
    session: &mut host_runner::Session,
    time: bool,
    repeats: usize,
    baseline: bool,
) -> Result<Measured, Error> {
    let env = Env::of_plan(plan, &inputs.sizes)?;
    let mut host_index = BTreeMap::new();
    let mut buffers = vec![];
    for (i, b) in plan.global_buffers() {
        let n = env.eval(&b.len, &format!("the length of buffer {}", b.name))?;
        let (esz, _) = layout(&b.elem);
        let bytes = n
            .checked_mul(esz)
            .ok_or_else(|| Error::plain(format!("buffer {} is too large", b.name)))?;
        let init = match b.role {
            Role::Input(k) if prepared.bytes(k, bytes).is_some() => {
                BufferInit::Data(prepared.bytes(k, bytes).map(<[u8]>::to_vec).unwrap_or_default())
            }
            Role::Input(k) => {
                let mut data = Vec::with_capacity(bytes);
                encode(&inputs.values[k], &b.elem, &mut data)?;
                if data.len() != bytes {
                    return Err(Error::plain(format!(
                        "internal: input {} has {} bytes, expected {bytes}",
                        b.name,
                        data.len()
                    )));
                }
                BufferInit::Data(data)
            }
            Role::OutputLength | Role::TempLength => BufferInit::Zeroed,
            Role::InputLength(_) => {
                return Err(Error::plain(format!(
                    "internal: a program run on its own has a filter-result parameter\n{}",
                    codegen_opencl::BUG_NOTE
                )))
            }
            // Uploaded rather than filled: Oclgrind 21.10 takes filled memory as uninitialized,
            // and the filter's status words are small (two ints per tile of 2048 elements).
            Role::Scratch => BufferInit::Data(vec![0; bytes]),
            Role::Output | Role::Temp => BufferInit::Uninit,
        };
        host_index.insert(i, buffers.len());
        buffers.push(BufferSpec {
            name: b.name.clone(),
            bytes,
            init,
        });
    }
    let err_flag = buffers.len();
    buffers.push(BufferSpec {
        name: "e_flag".into(),
        bytes: 4,
        init: BufferInit::Zeroed,
    });
    let mut launches = vec![];
    for k in &plan.kernels {
        launches.push(launch_of(
            plan,
            k,
            &env,
            host_runner::KernelArg::Buffer(err_flag),
            |b| Ok(host_runner::KernelArg::Buffer(host_index[&b])),
            |p| scalar_arg(&inputs.values[p]),
        )?);
    }
    let result = &plan.result;
    let elem_ty = &plan.memory.buffers[result.data].elem;
    let (esz, _) = layout(elem_ty);
    let mut reads = vec![];
    let exist_top = matches!(result.ty, Type::Exists(_));
    match (exist_top, result.lengths) {
        (true, Some(l)) => {
            // Existential elements may themselves be arrays: count in rows of the element.
            let Type::Exists(e) = &result.ty else {
                unreachable!("checked")
            };
            // A struct of arrays (tuples holding arrays) reads each component buffer up to
            // the one length.
            for (part, pt) in result.parts.iter().zip(exist_parts(e)) {
                let (inner, _) = shape(&pt, &inputs.sizes)?;
                let (psz, _) = layout(&plan.memory.buffers[*part].elem);
                reads.push(ReadSpec::Counted {
                    data: host_index[part],
                    count: host_index[&l],
                    count_index: 0,
                    elem_bytes: inner.iter().product::<usize>() * psz,
                });
            }
        }
        (_, Some(l)) => {
            // rows of filter results: each component buffer (one for elements stored whole),
            // then the rows' lengths
            reads.extend(result.parts.iter().map(|p| ReadSpec::Whole(host_index[p])));
            reads.push(ReadSpec::Whole(host_index[&l]));
        }
        // a struct of arrays: every component buffer, `data` first
        (_, None) => reads.extend(result.parts.iter().map(|p| ReadSpec::Whole(host_index[p]))),
    }
    // The lengths that device-side checks test, for the message (read after all launches).
    let mut length_reads = vec![];
    for c in &plan.length_checks {
        length_reads.push(reads.len());
        reads.push(ReadSpec::Whole(host_index[&c.length.1]));
    }
    reads.push(ReadSpec::Whole(err_flag));
    let host_plan = Plan {
        source: plan.source.clone(),
        build_options: "-cl-std=CL1.2".into(),
        buffers,
        launches,
        reads,
    };
    let out = session
        .run(
            &host_plan,
            &host_runner::RunOptions {
                profile: time,
                repeats: repeats.max(1),
            },
        )
        .map_err(run_error)?;
    let flag = i32::from_le_bytes(
        out.reads
            .last()
            .and_then(|b| b.get(..4))
            .and_then(|b| b.try_into().ok())
            .unwrap_or([0; 4]),
    );
    flag_error(plan, flag, &env, |b| {
        let at = plan
            .length_checks
            .iter()
            .position(|c| c.length.1 == b)
            .map(|i| length_reads[i]);
        Ok(at
            .and_then(|at| out.reads[at].get(..4))
            .and_then(|b| b.try_into().ok())
            .map(i32::from_le_bytes)
            .unwrap_or(0))
    })?;
    let value =
        match (&result.ty, result.lengths) {
            _ if prepared.skip_result => Value::Tuple(vec![]),
            (Type::Exists(e), Some(_)) if result.parts.len() > 1 => {
                let mut parts = vec![];
                let mut n = 0;
                for (k, (part, pt)) in result.parts.iter().zip(exist_parts(e)).enumerate() {
                    let (inner, elem) = shape(&pt, &inputs.sizes)?;
                    let (psz, _) = layout(&plan.memory.buffers[*part].elem);
                    let row = inner.iter().product::<usize>() * psz;
                    n = out.reads[k].len().checked_div(row).unwrap_or(0);
                    let mut dims = vec![n];
                    dims.extend(inner);
                    parts.push(decode_dims(&out.reads[k], &dims, &elem));
                }
                let t = Type::array((**e).clone(), ir::ArithExpr::cst(n as i64));
                from_parts(&t, &mut parts.into_iter())
                    .ok_or_else(|| Error::plain("internal: the result's component buffers do not match its type"))?
            }
            (Type::Exists(e), Some(_)) => {
                let (inner, elem) = shape(e, &inputs.sizes)?;
                let bytes = &out.reads[0];
                let row = inner.iter().product::<usize>() * esz;
                let n = bytes.len().checked_div(row).unwrap_or(0);
                let mut dims = vec![n];
                dims.extend(inner);
                decode_dims(bytes, &dims, &elem)
            }
            // A tuple of filter results, rows of them and other values: a row of `L` lengths
            // for each component holding run-time lengths, in order.
            (Type::Tuple(cs), Some(_)) => {
                let lens = &out.reads[result.parts.len()];
                let len_at = |i: usize| {
                    lens.get(i * 4..i * 4 + 4)
                        .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")).max(0) as usize)
                        .ok_or_else(|| Error::plain("internal: a result length is missing"))
                };
                let holders = cs
                    .iter()
                    .filter(|c| {
                        matches!(c, Type::Exists(_)) || matches!(c, Type::Array(r, _) if matches!(**r, Type::Exists(_)))
                    })
                    .count();
                let widest = (lens.len() / 4).checked_div(holders).unwrap_or(0);
                let (mut k, mut j) = (0, 0);
                let mut comps = vec![];
                for c in cs {
                    let value = match c {
                        Type::Exists(x) => {
                            let len = len_at(j * widest)?;
                            j += 1;
                            let mut parts = vec![];
                            for (part, pt) in result.parts[k..].iter().zip(exist_parts(x)) {
                                let (inner, elem) = shape(&pt, &inputs.sizes)?;
                                let (psz, _) = layout(&plan.memory.buffers[*part].elem);
                                let row_bytes = inner.iter().product::<usize>() * psz;
                                let cap = out.reads[k].len().checked_div(row_bytes).unwrap_or(len);
                                let mut dims = vec![len.min(cap)];
                                dims.extend(inner);
                                parts.push(decode_dims(&out.reads[k], &dims, &elem));
                                k += 1;
                            }
                            let t = Type::array((**x).clone(), ir::ArithExpr::cst(len as i64));
                            from_parts(&t, &mut parts.into_iter())
                        }
                        Type::Array(r, n) if matches!(**r, Type::Exists(_)) => {
                            let Type::Exists(x) = &**r else { unreachable!("matched") };
                            let n = n
                                .eval(&|v| inputs.sizes.get(v).copied())
                                .map_err(|e| Error::plain(e.to_string()))? as usize;
                            let mut cols = vec![];
                            for (part, pt) in result.parts[k..].iter().zip(exist_parts(x)) {
                                let (inner, elem) = shape(&pt, &inputs.sizes)?;
                                let (psz, _) = layout(&plan.memory.buffers[*part].elem);
                                let row_bytes = inner.iter().product::<usize>() * psz;
                                let data = &out.reads[k];
                                let cap = data.len().checked_div(n * row_bytes.max(1)).unwrap_or(0);
                                cols.push((inner, elem, row_bytes, cap, data));
                                k += 1;
                            }
                            let mut rows = vec![];
                            for row in 0..n {
                                let len = len_at(j * widest + row)?;
                                let mut parts = vec![];
                                let mut kept = len;
                                for (inner, elem, row_bytes, cap, data) in &cols {
                                    kept = kept.min(*cap);
                                    let mut dims = vec![len.min(*cap)];
                                    dims.extend(inner.iter().copied());
                                    parts.push(decode_dims(&data[row * cap * row_bytes..], &dims, elem));
                                }
                                let t = Type::array((**x).clone(), ir::ArithExpr::cst(kept as i64));
                                rows.push(from_parts(&t, &mut parts.into_iter()).ok_or_else(|| {
                                    Error::plain("internal: a row's component buffers do not match its type")
                                })?);
                            }
                            j += 1;
                            Some(Value::Array(rows))
                        }
                        c @ Type::Scalar(_)
                        | c @ Type::Vector(..)
                        | c @ Type::Tuple(_)
                        | c @ Type::Array(..)
                        | c @ Type::Fun(..) => {
                            let mut parts = vec![];
                            for pt in codegen_opencl::storage_parts(c) {
                                let (dims, elem) = shape(&pt, &inputs.sizes)?;
                                parts.push(decode_dims(&out.reads[k], &dims, &elem));
                                k += 1;
                            }
                            from_parts(c, &mut parts.into_iter())
                        }
                    };
                    comps.push(value.ok_or_else(|| {
                        Error::plain("internal: the result's component buffers do not match its type")
                    })?);
                }
                Value::Tuple(comps)
            }
            (Type::Array(row_ty, n), Some(_)) => {
                // Rows of filter results, or rows of rows of them (a length each, row-major).
                let (e, per) = match &**row_ty {
                    Type::Exists(e) => (e, None),
                    Type::Array(r, m) if matches!(**r, Type::Exists(_)) => {
                        let Type::Exists(e) = &**r else { unreachable!("matched") };
                        (e, Some(m))
                    }
                    Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Array(..) | Type::Fun(..) => {
                        return Err(Error::plain("internal: rows without existential type"))
                    }
                };
                let eval = |l: &ir::ArithExpr| {
                    l.eval(&|v| inputs.sizes.get(v).copied())
                        .map_err(|e| Error::plain(e.to_string()))
                        .map(|v| v as usize)
                };
                let outer = eval(n)?;
                let per = per.map(eval).transpose()?;
                let n = outer * per.unwrap_or(1);
                let lens = &out.reads[result.parts.len()];
                // Each component buffer holds `n` rows at one capacity (tuples holding arrays are
                // stored as one buffer per component).
                let mut comps = vec![];
                for (k, (part, pt)) in result.parts.iter().zip(exist_parts(e)).enumerate() {
                    let (inner, elem) = shape(&pt, &inputs.sizes)?;
                    let (psz, _) = layout(&plan.memory.buffers[*part].elem);
                    let row_elems = inner.iter().product::<usize>();
                    let data = &out.reads[k];
                    let cap = if n == 0 {
                        0
                    } else {
                        data.len() / (n * row_elems.max(1) * psz.max(1))
                    };
                    comps.push((inner, elem, row_elems * psz, cap, data));
                }
                let mut rows = vec![];
                for r in 0..n {
                    let len = i32::from_le_bytes(lens[r * 4..r * 4 + 4].try_into().expect("4 bytes")) as usize;
                    let mut parts = vec![];
                    let mut kept = len;
                    for (inner, elem, row_bytes, cap, data) in &comps {
                        let mut dims = vec![len.min(*cap)];
                        kept = kept.min(*cap);
                        dims.extend(inner.iter().copied());
                        parts.push(decode_dims(&data[r * cap * row_bytes..], &dims, elem));
                    }
                    let t = Type::array((**e).clone(), ir::ArithExpr::cst(kept as i64));
                    rows.push(
                        from_parts(&t, &mut parts.into_iter())
                            .ok_or_else(|| Error::plain("internal: a row's component buffers do not match its type"))?,
                    );
                }
                match per {
                    Some(m) if m > 0 => Value::Array(rows.chunks(m).map(|c| Value::Array(c.to_vec())).collect()),
                    Some(_) => Value::Array((0..outer).map(|_| Value::Array(vec![])).collect()),
                    None => Value::Array(rows),
                }
            }
            (t, _) if result.parts.len() > 1 => {
                let mut parts = vec![];
                for (k, pt) in codegen_opencl::storage_parts(t).iter().enumerate() {
                    let (dims, elem) = shape(pt, &inputs.sizes)?;
                    parts.push(decode_dims(&out.reads[k], &dims, &elem));
                }
                from_parts(t, &mut parts.into_iter())
                    .ok_or_else(|| Error::plain("internal: the result's component buffers do not match its type"))?
            }
            (t, _) => {
                let (dims, elem) = shape(t, &inputs.sizes)?;
                decode_dims(&out.reads[0], &dims, &elem)
            }
        };
    let timing = time.then(|| {
        let mut s = format!("device: {}\n", session.info().name);
        let mut total = 0;
        for (k, ns) in &out.kernel_times_ns {
            total += ns;
            s.push_str(&format!("{k}: {:.3} ms\n", *ns as f64 / 1e6));
        }
        s.push_str(&format!("total kernel time: {:.3} ms\n", total as f64 / 1e6));
        s
    });
    let input_bytes: usize = plan
        .global_buffers()
        .filter(|(_, b)| matches!(b.role, Role::Input(_)))
        .map(|(i, _)| host_plan.buffers[host_index[&i]].bytes)
        .sum();
    let copy_ns = if baseline {
        Some(
            session
                .copy_baseline(input_bytes.max(4), repeats.max(3))
                .map_err(|e| Error::plain(e.to_string()))?,
        )
    } else {
        None
    };
    let device_name = session.info().name.clone();
    Ok(Measured {
        value,
        timing,
        device: device_name,
        kernel_ns: out.kernel_times_ns,
        input_bytes,
        copy_ns,
    })
}

/// The types of one element's parts in each storage buffer of a filter result with elements
/// of type `e` (one element of `e` itself when it is stored whole).
fn exist_parts(e: &Type) -> Vec<Type> {
    let one = Type::array(e.clone(), ir::ArithExpr::cst(1));
    codegen_opencl::storage_parts(&one)
        .into_iter()
        .map(|p| match p {
            Type::Array(c, _) => *c,
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => t,
        })
        .collect()
}

/// Reassembles a value of type `ty` from the values of its storage buffers, in the order of
/// `codegen_opencl::storage_parts`: tuples holding arrays are stored as one array per component
/// (struct of arrays), so their elements are zipped back together here. `None` when `parts`
/// runs out or a component's length disagrees with the others'.
pub fn from_parts(ty: &Type, parts: &mut dyn Iterator<Item = Value>) -> Option<Value> {
    if codegen_opencl::storage_parts(ty).len() == 1 {
        return parts.next();
    }
    let (dims, elem) = memalloc::dims_of(ty);
    let Type::Tuple(cs) = &elem else { return None };
    let comps = cs
        .iter()
        .map(|c| {
            let t = dims.iter().rev().fold(c.clone(), |t, n| Type::array(t, n.clone()));
            from_parts(&t, parts)
        })
        .collect::<Option<Vec<_>>>()?;
    zip_values(comps, dims.len())
}

/// Element-wise tuples of `comps`, `depth` array levels down.
fn zip_values(comps: Vec<Value>, depth: usize) -> Option<Value> {
    if depth == 0 {
        return Some(Value::Tuple(comps));
    }
    let rows = comps
        .into_iter()
        .map(|c| match c {
            Value::Array(xs) => Some(xs),
            Value::Float(_)
            | Value::Double(_)
            | Value::Int(_)
            | Value::Bool(_)
            | Value::Uint(_)
            | Value::Long(_)
            | Value::Ulong(_)
            | Value::Vector(_)
            | Value::Tuple(_)
            | Value::Approx(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let n = rows.first()?.len();
    if rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let mut iters: Vec<_> = rows.into_iter().map(|r| r.into_iter()).collect();
    (0..n)
        .map(|_| {
            zip_values(
                iters.iter_mut().map(|it| it.next()).collect::<Option<Vec<_>>>()?,
                depth - 1,
            )
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_of_arrays_are_zipped_back_from_their_component_buffers() {
        use ir::ArithExpr;
        let f = |x: f32| Value::Float(x);
        let arr = |xs: Vec<Value>| Value::Array(xs);
        let n = ArithExpr::size_var("N");
        // [([float]2, float)]N from the buffers [[float]2]N and [float]N
        let ty = Type::array(
            Type::Tuple(vec![Type::array(Type::float(), ArithExpr::cst(2)), Type::float()]),
            n,
        );
        let rows = arr(vec![arr(vec![f(1.0), f(2.0)]), arr(vec![f(3.0), f(4.0)])]);
        let last = arr(vec![f(5.0), f(6.0)]);
        let got = from_parts(&ty, &mut vec![rows, last].into_iter());
        let want = arr(vec![
            Value::Tuple(vec![arr(vec![f(1.0), f(2.0)]), f(5.0)]),
            Value::Tuple(vec![arr(vec![f(3.0), f(4.0)]), f(6.0)]),
        ]);
        assert_eq!(got, Some(want));
        // components of different lengths are no zip
        let short = arr(vec![f(5.0)]);
        let rows = arr(vec![arr(vec![f(1.0), f(2.0)]), arr(vec![f(3.0), f(4.0)])]);
        assert_eq!(from_parts(&ty, &mut vec![rows, short].into_iter()), None);
    }

    #[test]
    fn a_filter_result_of_tuples_holding_arrays_is_read_per_component_buffer() {
        use ir::ArithExpr;
        let row = Type::array(Type::float(), ArithExpr::size_var("M"));
        // (float, ([float]M, int)): three buffers, one element of each
        let elem = Type::Tuple(vec![Type::float(), Type::Tuple(vec![row.clone(), Type::int()])]);
        assert_eq!(exist_parts(&elem), vec![Type::float(), row.clone(), Type::int()]);
        // elements stored whole: one buffer
        assert_eq!(exist_parts(&row), vec![row.clone()]);
        let pair = Type::Tuple(vec![Type::float(), Type::int()]);
        assert_eq!(exist_parts(&pair), vec![pair.clone()]);
    }
}
