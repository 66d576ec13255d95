//! Glue between the compiler's `KernelPlan` and the OpenCL host runner: evaluating symbolic
//! sizes, encoding inputs as bytes, decoding the result.

use crate::data::Inputs;
use crate::Error;
use codegen_opencl::{KernelArg, KernelPlan};
use host_runner::{BufferInit, BufferSpec, Launch, Plan, ReadSpec};
use ir::interp::Value;
use ir::{Diagnostic, Scalar, Type};
use memalloc::Role;
use std::collections::BTreeMap;

/// Byte size and alignment of one element in device memory.
///
/// A buffer of vectors holds their lanes packed (the kernel reads it with `vloadN`), so a
/// vector element alone is its scalars. Tuples are C structs with their natural OpenCL C layout
/// (`member_layout`): the kernel accesses fields by name, and the host must put each field
/// where the device compiler does. Natural layout rather than packed structs, because OpenCL
/// compilers may split or refuse unaligned vector accesses into packed structs.
pub fn layout(t: &Type) -> (usize, usize) {
    match t {
        Type::Vector(s, w) => (s.size_bytes() * usize::from(*w), s.size_bytes()),
        t @ Type::Scalar(_) | t @ Type::Tuple(_) | t @ Type::Array(..) | t @ Type::Exists(_) | t @ Type::Fun(..) => {
            member_layout(t)
        }
    }
}

/// Size and alignment of a value as a struct member in OpenCL C (spec 6.1.5): a vector is
/// aligned to its size, and a 3-lane vector has the size of a 4-lane one.
pub(crate) fn member_layout(t: &Type) -> (usize, usize) {
    match t {
        Type::Scalar(s) => (s.size_bytes(), s.size_bytes()),
        Type::Vector(s, w) => {
            let size = s.size_bytes() * usize::from(if *w == 3 { 4 } else { *w });
            (size, size)
        }
        Type::Tuple(ts) => {
            let (mut off, mut align) = (0usize, 1usize);
            for c in ts {
                let (sz, al) = member_layout(c);
                off = off.div_ceil(al) * al + sz;
                align = align.max(al);
            }
            (off.div_ceil(align) * align, align)
        }
        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => (0, 1),
    }
}

fn encode_scalar(v: &Value, s: Scalar, out: &mut Vec<u8>) -> Result<(), Error> {
    match (v, s) {
        (Value::Float(f), Scalar::Float) => out.extend(f.to_le_bytes()),
        (Value::Double(d), Scalar::Double) => out.extend(d.to_le_bytes()),
        (Value::Int(i), Scalar::Int) => out.extend(i.to_le_bytes()),
        (Value::Bool(b), Scalar::Bool) => out.extend(i32::from(*b).to_le_bytes()),
        (Value::Uint(u), Scalar::Uint) => out.extend(u.to_le_bytes()),
        (Value::Long(l), Scalar::Long) => out.extend(l.to_le_bytes()),
        (Value::Ulong(u), Scalar::Ulong) => out.extend(u.to_le_bytes()),
        (v, s) => {
            return Err(Error::plain(format!(
                "internal: value {v:?} does not match {}",
                s.name()
            )))
        }
    }
    Ok(())
}

/// Appends the bytes of `v` (of element type `t`, arrays flattened row-major).
pub(crate) fn encode(v: &Value, t: &Type, out: &mut Vec<u8>) -> Result<(), Error> {
    match (v, t) {
        (Value::Array(items), Type::Array(e, _)) => items.iter().try_for_each(|x| encode(x, e, out)),
        // Nested arrays flatten row-major onto the buffer's element type.
        (Value::Array(items), _) => items.iter().try_for_each(|x| encode(x, t, out)),
        (_, Type::Scalar(s)) => encode_scalar(v, *s, out),
        (Value::Vector(lanes), Type::Vector(s, _)) => lanes.iter().try_for_each(|x| encode_scalar(x, *s, out)),
        (Value::Tuple(cs), Type::Tuple(ts)) => {
            let start = out.len();
            let (size, _) = member_layout(t);
            for (c, ct) in cs.iter().zip(ts) {
                let (sz, al) = member_layout(ct);
                while !(out.len() - start).is_multiple_of(al) {
                    out.push(0);
                }
                let field = out.len();
                encode(c, ct, out)?;
                // A 3-lane vector field, or a nested struct, ends in padding.
                while out.len() - field < sz {
                    out.push(0);
                }
            }
            while out.len() - start < size {
                out.push(0);
            }
            Ok(())
        }
        (v, t) => Err(Error::plain(format!("internal: cannot encode {v:?} as {t}"))),
    }
}

fn decode_scalar(b: &[u8], s: Scalar) -> Value {
    let w4 = || [b[0], b[1], b[2], b[3]];
    let w8 = || [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
    match s {
        Scalar::Float => Value::Float(f32::from_le_bytes(w4())),
        Scalar::Int => Value::Int(i32::from_le_bytes(w4())),
        Scalar::Bool => Value::Bool(i32::from_le_bytes(w4()) != 0),
        Scalar::Double => Value::Double(f64::from_le_bytes(w8())),
        Scalar::Uint => Value::Uint(u32::from_le_bytes(w4())),
        Scalar::Long => Value::Long(i64::from_le_bytes(w8())),
        Scalar::Ulong => Value::Ulong(u64::from_le_bytes(w8())),
    }
}

/// Decodes one element of type `t` (no arrays) at the start of `b`.
fn decode_elem(b: &[u8], t: &Type) -> Value {
    match t {
        Type::Scalar(s) => decode_scalar(b, *s),
        Type::Vector(s, w) => Value::Vector(
            (0..usize::from(*w))
                .map(|k| decode_scalar(&b[k * s.size_bytes()..], *s))
                .collect(),
        ),
        Type::Tuple(ts) => {
            let mut off = 0usize;
            let mut cs = vec![];
            for c in ts {
                let (sz, al) = member_layout(c);
                off = off.div_ceil(al) * al;
                cs.push(decode_elem(&b[off..], c));
                off += sz;
            }
            Value::Tuple(cs)
        }
        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => Value::Array(vec![]),
    }
}

/// Decodes nested arrays of `dims` (outermost first) of `elem` from `b`.
fn decode_dims(b: &[u8], dims: &[usize], elem: &Type) -> Value {
    if dims.is_empty() {
        return decode_elem(b, elem);
    }
    let (esz, _) = layout(elem);
    let stride: usize = dims[1..].iter().product::<usize>() * esz;
    Value::Array(
        (0..dims[0])
            .map(|i| decode_dims(&b[i * stride..], &dims[1..], elem))
            .collect(),
    )
}

struct Env {
    /// C-level size names (v_N, v_X1) to values (capacities for run-time lengths).
    values: BTreeMap<String, i64>,
}

impl Env {
    /// The plan's C-level sizes from the user's (`inputs.sizes`), then the capacities of its
    /// run-time lengths, which are expressions of those.
    fn of_plan(plan: &KernelPlan, sizes: &BTreeMap<String, i64>) -> Result<Env, Error> {
        let mut env = Env {
            values: BTreeMap::new(),
        };
        for (user, c) in &plan.sizes {
            if let Some(v) = sizes.get(user) {
                env.values.insert(c.clone(), *v);
            }
        }
        // Kernels built for other sizes would index past their buffers or compute less.
        for (user, v) in &plan.specialised {
            if sizes.get(user) != Some(v) {
                return Err(Error::Plain {
                    message: format!(
                        "internal: kernels built for {user}={v} were run at {user}={}",
                        sizes.get(user).map_or("(none)".into(), |x| x.to_string())
                    ),
                    notes: vec![codegen_opencl::BUG_NOTE.into()],
                });
            }
        }
        for (c, cap) in &plan.capacities {
            let v = env.eval(cap, "the capacity")?;
            env.values.insert(c.clone(), v as i64);
        }
        Ok(env)
    }

    fn eval(&self, e: &arith::ArithExpr, what: &str) -> Result<usize, Error> {
        let v = e
            .eval(&|n| self.values.get(n).copied())
            .map_err(|err| Error::plain(format!("cannot evaluate {what} {e}: {err}")))?;
        usize::try_from(v).map_err(|_| Error::plain(format!("{what} {e} is negative ({v})")))
    }
}

/// Splits a type into its array lengths (evaluated at the user's sizes) and element type.
fn shape(t: &Type, sizes: &BTreeMap<String, i64>) -> Result<(Vec<usize>, Type), Error> {
    let (dims, elem) = memalloc::dims_of(t);
    let dims = dims
        .iter()
        .map(|d| {
            d.eval(&|n| sizes.get(n).copied())
                .map_err(|e| Error::plain(format!("cannot evaluate the result length {d}: {e}")))
                .and_then(|v| usize::try_from(v).map_err(|_| Error::plain(format!("negative length {d}"))))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((dims, elem))
}

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
    /// [`crate::data::random_inputs_lean`]): used when their length is the buffer's, so that
    /// the values of such a parameter may be left out.
    pub input_bytes: &'a [Option<Vec<u8>>],
    /// The result is not decoded into a value (`Measured::value` is then an empty tuple): a
    /// timing whose result nobody compares spares the decoding of a large output.
    pub skip_result: bool,
}

impl Prepared<'_> {
    /// Parameter `k`'s prepared bytes, where they are the `len` its buffer takes.
    fn bytes(&self, k: usize, len: usize) -> Option<&[u8]> {
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
    let data = host_index[&result.data];
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
            let (inner, _) = shape(e, &inputs.sizes)?;
            let row = inner.iter().product::<usize>() * esz;
            reads.push(ReadSpec::Counted {
                data,
                count: host_index[&l],
                count_index: 0,
                elem_bytes: row,
            });
        }
        (_, Some(l)) => {
            reads.push(ReadSpec::Whole(data));
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
    let mut session = host_runner::Session::reuse(device).map_err(|e| Error::plain(e.to_string()))?;
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
    let value = match (&result.ty, result.lengths) {
        _ if prepared.skip_result => Value::Tuple(vec![]),
        (Type::Exists(e), Some(_)) => {
            let (inner, elem) = shape(e, &inputs.sizes)?;
            let bytes = &out.reads[0];
            let row = inner.iter().product::<usize>() * esz;
            let n = bytes.len().checked_div(row).unwrap_or(0);
            let mut dims = vec![n];
            dims.extend(inner);
            decode_dims(bytes, &dims, &elem)
        }
        (Type::Array(row_ty, n), Some(_)) => {
            let Type::Exists(e) = &**row_ty else {
                return Err(Error::plain("internal: rows without existential type"));
            };
            let n = n
                .eval(&|v| inputs.sizes.get(v).copied())
                .map_err(|e| Error::plain(e.to_string()))? as usize;
            let (inner, elem) = shape(e, &inputs.sizes)?;
            let data = &out.reads[0];
            let lens = &out.reads[1];
            let row_elems = inner.iter().product::<usize>();
            let cap = if n == 0 {
                0
            } else {
                data.len() / (n * row_elems.max(1) * esz.max(1))
            };
            let mut rows = vec![];
            for r in 0..n {
                let len = i32::from_le_bytes(lens[r * 4..r * 4 + 4].try_into().expect("4 bytes")) as usize;
                let start = r * cap * row_elems * esz;
                let mut dims = vec![len.min(cap)];
                dims.extend(inner.iter().copied());
                rows.push(decode_dims(&data[start..], &dims, &elem));
            }
            Value::Array(rows)
        }
        (t, _) if result.parts.len() > 1 => {
            let mut parts = vec![];
            for (k, pt) in codegen_opencl::storage_parts(t).iter().enumerate() {
                let (dims, elem) = shape(pt, &inputs.sizes)?;
                parts.push(decode_dims(&out.reads[k], &dims, &elem));
            }
            crate::data::from_parts(t, &mut parts.into_iter())
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
    session.keep(device);
    Ok(Measured {
        value,
        timing,
        device: device_name,
        kernel_ns: out.kernel_times_ns,
        input_bytes,
        copy_ns,
    })
}

/// A failure of the OpenCL run; the driver refusing kernels we generated is our bug.
fn run_error(e: host_runner::Error) -> Error {
    match e {
        host_runner::Error::Build { log } => Error::Plain {
            message: "the OpenCL driver could not build the generated kernels".into(),
            notes: vec![
                format!("build log:\n{log}"),
                "run `lift compile` on the program to see the generated source".into(),
                codegen_opencl::BUG_NOTE.into(),
            ],
        },
        e => Error::plain(e.to_string()),
    }
}

#[cfg(test)]
mod build_error_tests {
    use super::*;

    #[test]
    fn a_driver_refusing_generated_code_is_reported_as_our_bug() {
        let e = run_error(host_runner::Error::Build {
            log: "k.cl:1:1: error: boom".into(),
        });
        let text = e.render("p.lisp", "");
        assert!(text.contains("could not build the generated kernels"), "{text}");
        assert!(text.contains("k.cl:1:1: error: boom"), "{text}");
        assert!(text.contains(codegen_opencl::BUG_NOTE), "{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f4() -> Type {
        Type::Vector(Scalar::Float, 4)
    }

    fn f3() -> Type {
        Type::Vector(Scalar::Float, 3)
    }

    #[test]
    fn vectors_in_structs_have_the_opencl_c_layout() {
        // A buffer of vectors alone holds packed lanes.
        assert_eq!(layout(&f3()), (12, 4));
        assert_eq!(layout(&f4()), (16, 4));
        // As struct members, vectors align to their size; a float3 takes 16 bytes.
        assert_eq!(layout(&Type::Tuple(vec![Type::float(), f4()])), (32, 16));
        assert_eq!(layout(&Type::Tuple(vec![f3(), Type::float()])), (32, 16));
        assert_eq!(layout(&Type::Tuple(vec![f4(), Type::float()])), (32, 16));
        let nested = Type::Tuple(vec![Type::float(), Type::Tuple(vec![Type::float(), f4()])]);
        assert_eq!(layout(&nested), (48, 16));
        assert_eq!(layout(&Type::Tuple(vec![Type::float(), Type::float()])), (8, 4));
    }

    #[test]
    fn tuples_with_vectors_encode_at_their_field_offsets_and_decode_back() {
        let t = Type::Tuple(vec![Type::float(), f3(), Type::float()]);
        let lanes = |xs: &[f32]| Value::Vector(xs.iter().map(|x| Value::Float(*x)).collect());
        let v = Value::Tuple(vec![Value::Float(1.0), lanes(&[2.0, 3.0, 4.0]), Value::Float(5.0)]);
        let mut out = vec![];
        encode(&v, &t, &mut out).unwrap();
        assert_eq!(out.len(), 48);
        let at = |off: usize| f32::from_le_bytes([out[off], out[off + 1], out[off + 2], out[off + 3]]);
        assert_eq!((at(0), at(16), at(20), at(24), at(32)), (1.0, 2.0, 3.0, 4.0, 5.0));
        assert_eq!(decode_elem(&out, &t), v);
    }
}

/// A host value at run time.
#[derive(Clone, Debug)]
enum HostVal {
    Dev(host_runner::Resident),
    /// A filter result: its data (at its slot's capacity, `host::HostProgram::caps`) and its
    /// length (one int), both on the device.
    Exist(host_runner::Resident, host_runner::Resident),
    /// A scalar parameter, passed to kernels by value.
    Scalar(Value),
}

/// A unit's buffers, made on its first launch and kept for the run.
struct UnitRt {
    prepared: host_runner::Prepared,
    /// Per plan buffer: its resident buffer (inputs and the output are bound per launch).
    fixed: BTreeMap<usize, host_runner::Resident>,
    /// Buffers zeroed before every launch (counters of filters, lengths), each with a buffer of
    /// zeros of its size, uploaded once and copied from: Oclgrind 21.10 takes filled memory as
    /// uninitialized, and a blocking upload per launch would stall a host loop.
    zeroed: Vec<(host_runner::Resident, host_runner::Resident)>,
    /// Two output buffers used in turn, so that a launch never overwrites the value the
    /// previous one produced (a loop reads it).
    /// Made on first use: a unit that always writes a loop's state buffer needs neither, one
    /// that runs once needs one.
    outs: [Option<host_runner::Resident>; 2],
    /// The lengths of `outs` when the unit returns a filter result.
    out_lens: [Option<host_runner::Resident>; 2],
    /// Four zero bytes copied into the output's length before each launch.
    len_zeros: Option<host_runner::Resident>,
    exist_out: bool,
    out_bytes: usize,
    turn: usize,
    flag: host_runner::Resident,
    env: Env,
    checked: bool,
}

struct HostExec<'a> {
    // Field order is drop order: the units' kernels go before the session's context.
    units: Vec<Option<UnitRt>>,
    session: host_runner::Session,
    hp: &'a crate::host::HostProgram,
    inputs: &'a Inputs,
    vals: Vec<Option<HostVal>>,
    profile: bool,
    /// Launch events: (loop number, step within it or `usize::MAX` outside loops, kernel).
    events: Vec<(usize, usize, String, host_runner::LaunchEvent)>,
    /// The loop and step being run, for `events`.
    at: (usize, usize),
    /// Each loop run: its kind and the number of steps it took.
    loops: Vec<(&'static str, usize)>,
    /// Whether an `iterate-until` enqueues its next step before its condition is read.
    ahead: bool,
    /// Whether every unit's flag is read right after its launch (`run_host`'s second run).
    check_each: bool,
    /// Whether a device-side check failed (read at the end of the run).
    flag_failed: bool,
    /// Each loop's state buffers, by its state slot.
    loop_bufs: BTreeMap<usize, [HostVal; 2]>,
    /// The length buffers of arrays used as filter results, by the array's slot.
    array_lens: BTreeMap<usize, host_runner::Resident>,
}

/// Runs a host program (`crate::host`): uploads the parameters once, launches units as the
/// host steps say, keeps every value on the device, reads back only conditions and the result.
pub fn run_host(
    hp: &crate::host::HostProgram,
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
    hp: &crate::host::HostProgram,
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
fn run_host_once(
    hp: &crate::host::HostProgram,
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
    fn run(&mut self) -> Result<(Value, Option<HostMeasure>), Error> {
        let (hp, inputs, time) = (self.hp, self.inputs, self.profile);
        // Every unit's kernels are built and its buffers made before the run starts.
        for (u, unit) in hp.units.iter().enumerate() {
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
        let value = match self.val(result)? {
            HostVal::Scalar(v) => v,
            HostVal::Exist(data, len) => {
                // Only the elements the length counts cross to the host.
                let Type::Exists(elem) = &hp.slots[result] else {
                    return Err(Error::plain("internal: a filter result's slot is not existential"));
                };
                let (esz, _) = layout(elem);
                let n = read_int(&self.session, Some(len))?;
                let cap = self.session.bytes_of(data) / esz.max(1);
                let n = usize::try_from(n).unwrap_or(0).min(cap);
                let bytes = self.session.read_resident(data, 0, n * esz).map_err(run_error)?;
                decode_dims(&bytes, &[n], elem)
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
        };
        self.session.finish().map_err(run_error)?;
        let wall = started.elapsed();
        self.check_flags()?;
        let timing = time.then(|| self.timing(wall)).transpose()?;
        Ok((value, timing))
    }
}

impl HostExec<'_> {
    fn val(&self, s: crate::host::Slot) -> Result<HostVal, Error> {
        self.vals[s]
            .clone()
            .ok_or_else(|| Error::plain(format!("internal: host value s{s} used before it is computed")))
    }

    fn dev(&self, s: crate::host::Slot) -> Result<host_runner::Resident, Error> {
        match self.val(s)? {
            HostVal::Dev(r) | HostVal::Exist(r, _) => Ok(r),
            HostVal::Scalar(_) => Err(Error::plain(format!("internal: host value s{s} is not on the device"))),
        }
    }

    /// The length buffer of the filter result in slot `s`.
    fn len_buf(&self, s: crate::host::Slot) -> Result<host_runner::Resident, Error> {
        match self.val(s)? {
            HostVal::Exist(_, l) => Ok(l),
            HostVal::Dev(_) | HostVal::Scalar(_) => Err(Error::plain(format!(
                "internal: host value s{s} is not a filter result"
            ))),
        }
    }

    /// The sizes of unit `u`: the program's, and the capacity of each filter-result argument.
    fn unit_sizes(&self, u: usize) -> Result<BTreeMap<String, i64>, Error> {
        let mut sizes = self.inputs.sizes.clone();
        for (k, a) in self.hp.units[u].args.iter().enumerate() {
            if let Some(cap) = &self.hp.caps[*a] {
                sizes.insert(codegen_opencl::capacity_size(k), self.eval_cap(cap)?);
            }
        }
        Ok(sizes)
    }

    fn eval_cap(&self, cap: &arith::ArithExpr) -> Result<i64, Error> {
        cap.eval(&|n| self.inputs.sizes.get(n).copied())
            .map_err(|e| Error::plain(format!("cannot evaluate the capacity {cap}: {e}")))
    }

    fn bytes_of_type(&self, t: &Type) -> Result<usize, Error> {
        let (dims, elem) = shape(t, &self.inputs.sizes)?;
        let (esz, _) = layout(&elem);
        Ok(dims.iter().product::<usize>() * esz)
    }

    /// Runs a block; with `dest`, its value ends in that buffer (a loop's state buffer).
    fn block(&mut self, b: &crate::host::Block, dest: Option<HostVal>) -> Result<usize, Error> {
        use crate::host::Step;
        let last = b.steps.len();
        for (i, st) in b.steps.iter().enumerate() {
            // The step that makes the block's value writes straight into `dest`.
            let into = match st {
                Step::Kernels { out, .. } if i + 1 == last && *out == b.result => dest.clone(),
                _ => None,
            };
            match st {
                Step::Kernels { out, unit } => {
                    let r = self.launch_unit(*unit, into)?;
                    self.vals[*out] = Some(r);
                }
                Step::Iterate {
                    out,
                    count,
                    init,
                    state,
                    body,
                    span,
                    fusion,
                } => {
                    let k = count.eval(&|n| self.inputs.sizes.get(n).copied()).map_err(|e| {
                        Error::Source(Diagnostic::new(
                            *span,
                            format!("cannot evaluate the count {count}: {e}"),
                        ))
                    })?;
                    let k = usize::try_from(k).map_err(|_| {
                        Error::Source(Diagnostic::new(*span, format!("the count {count} is negative ({k})")))
                    })?;
                    match fusion {
                        Some(f) => self.run_fused(f, *init, *state, body, *out, k)?,
                        None => {
                            let r = self.run_loop(*init, *state, body, None, k, "iterate")?;
                            self.vals[*out] = Some(r);
                        }
                    }
                }
                Step::Until {
                    out,
                    max,
                    init,
                    state,
                    body,
                    prev,
                    next,
                    cond,
                    span,
                } => {
                    let k = max
                        .eval(&|n| self.inputs.sizes.get(n).copied())
                        .map_err(|e| Error::Source(Diagnostic::new(*span, format!("cannot evaluate {max}: {e}"))))?;
                    let k = usize::try_from(k).unwrap_or(0);
                    let r = self.run_loop(*init, *state, body, Some((*prev, *next, *cond)), k, "iterate-until")?;
                    self.vals[*out] = Some(r);
                }
                Step::If { out, cond, then, els } => {
                    let c = match self.val(*cond)? {
                        HostVal::Scalar(Value::Bool(b)) => b,
                        HostVal::Scalar(v) => {
                            return Err(Error::plain(format!("internal: condition {v:?} is not a bool")))
                        }
                        HostVal::Exist(..) => return Err(Error::plain("internal: a condition is a filter result")),
                        HostVal::Dev(r) => {
                            let pending = self.session.read_later(r, 0, 4).map_err(run_error)?;
                            let bytes = pending.wait().map_err(run_error)?;
                            bytes.iter().any(|b| *b != 0)
                        }
                    };
                    let v = self.block(if c { then } else { els }, None)?;
                    let value = self.val(v)?;
                    self.vals[*out] = Some(self.existential(v, value, *out)?);
                }
            }
        }
        match (dest, self.vals[b.result].clone()) {
            (Some(HostVal::Dev(d)), Some(HostVal::Dev(r))) if r != d => self.session.copy(r, d).map_err(run_error)?,
            (Some(HostVal::Exist(d, dl)), Some(HostVal::Exist(r, rl))) if r != d => {
                self.session.copy(r, d).map_err(run_error)?;
                self.session.copy(rl, dl).map_err(run_error)?;
            }
            (Some(HostVal::Dev(_) | HostVal::Exist(..)), Some(HostVal::Dev(_) | HostVal::Exist(..))) | (None, _) => {}
            (Some(d), v) => {
                return Err(Error::plain(format!(
                    "internal: a block's value {v:?} cannot be written into {d:?}"
                )))
            }
        }
        Ok(b.result)
    }

    /// A host loop over two state buffers: step `i` reads the state of step `i - 1` and writes
    /// the other buffer. With a condition, step `i + 1` is enqueued before the condition of
    /// step `i` is waited for, so the device never idles on the read; the extra step only
    /// writes the buffer that does not hold the result.
    fn run_loop(
        &mut self,
        init: usize,
        state: usize,
        body: &crate::host::Block,
        cond: Option<(usize, usize, usize)>,
        steps: usize,
        kind: &'static str,
    ) -> Result<HostVal, Error> {
        let first = self.existential(init, self.val(init)?, state)?;
        if steps == 0 {
            return Ok(first);
        }
        let bufs = self.state_buffers(state)?;
        let loop_id = self.loops.len();
        self.loops.push((kind, 0));
        let outer = self.at;
        // A step run ahead of its condition could fail where the interpreter never runs it:
        // `run_host` then runs again without running ahead.
        let ahead = self.ahead;
        let mut pending: Option<(usize, host_runner::PendingRead)> = None;
        let mut done = None;
        for i in 0..steps {
            self.at = (loop_id, i);
            let cur = if i == 0 {
                first.clone()
            } else {
                bufs[(i - 1) % 2].clone()
            };
            self.vals[state] = Some(cur.clone());
            self.block(body, Some(bufs[i % 2].clone()))?;
            if let Some((prev, next, unit)) = cond {
                self.vals[prev] = Some(cur);
                self.vals[next] = Some(bufs[i % 2].clone());
                let c = match self.launch_unit(unit, None)? {
                    HostVal::Dev(c) => c,
                    v => return Err(Error::plain(format!("internal: a condition is {v:?}"))),
                };
                let read = self.session.read_later(c, 0, 4).map_err(run_error)?;
                if let Some((j, p)) = pending.take() {
                    if p.wait().map_err(run_error)?.iter().any(|b| *b != 0) {
                        done = Some(j);
                        break;
                    }
                }
                if ahead {
                    pending = Some((i, read));
                } else if read.wait().map_err(run_error)?.iter().any(|b| *b != 0) {
                    done = Some(i);
                    break;
                }
            } else {
                self.session.flush().map_err(run_error)?;
            }
        }
        if done.is_none() {
            if let Some((j, p)) = pending.take() {
                let _ = p.wait().map_err(run_error)?;
                done = Some(j);
            }
        }
        drop(pending);
        let last = done.unwrap_or(steps - 1);
        self.loops[loop_id].1 = last + 1;
        self.at = outer;
        Ok(bufs[last % 2].clone())
    }

    /// The value `v` of slot `from` as a value of slot `to`'s type: an array `[T]n` where a
    /// filter result is wanted (a loop's initial state, a branch of an `if`) gets a length
    /// buffer holding `n`, made and uploaded once per slot, so a loop reaching it again neither
    /// allocates nor waits.
    fn existential(&mut self, from: usize, v: HostVal, to: usize) -> Result<HostVal, Error> {
        match (&v, &self.hp.slots[from], &self.hp.slots[to]) {
            (HostVal::Dev(data), Type::Array(_, n), Type::Exists(_)) => {
                if let Some(len) = self.array_lens.get(&from) {
                    return Ok(HostVal::Exist(*data, *len));
                }
                let n = self.eval_cap(n)?;
                let n = i32::try_from(n).map_err(|_| Error::plain(format!("the length {n} does not fit an int")))?;
                let len = self.session.alloc("length", 4).map_err(run_error)?;
                self.session.upload(len, &n.to_le_bytes()).map_err(run_error)?;
                self.array_lens.insert(from, len);
                Ok(HostVal::Exist(*data, len))
            }
            _ => Ok(v),
        }
    }

    /// A loop's two state buffers, made on its first run: a loop inside another one runs
    /// again every outer step, on the same buffers (its previous value is dead by then). A
    /// filter result's buffers have the capacity of the loop's initial state, and a length
    /// each.
    fn state_buffers(&mut self, state: usize) -> Result<[HostVal; 2], Error> {
        if let Some(b) = self.loop_bufs.get(&state) {
            return Ok(b.clone());
        }
        let b = match (&self.hp.slots[state], &self.hp.caps[state]) {
            (Type::Exists(elem), Some(cap)) => {
                let (esz, _) = layout(elem);
                let cap = usize::try_from(self.eval_cap(cap)?)
                    .map_err(|_| Error::plain(format!("the capacity {cap} is negative")))?;
                let bytes = cap
                    .checked_mul(esz)
                    .ok_or_else(|| Error::plain("a loop's state is too large"))?;
                let mut one = || -> Result<HostVal, Error> {
                    Ok(HostVal::Exist(
                        self.session.alloc("state", bytes).map_err(run_error)?,
                        self.session.alloc("state length", 4).map_err(run_error)?,
                    ))
                };
                [one()?, one()?]
            }
            (t, _) => {
                let bytes = self.bytes_of_type(t)?;
                [
                    HostVal::Dev(self.session.alloc("state", bytes).map_err(run_error)?),
                    HostVal::Dev(self.session.alloc("state", bytes).map_err(run_error)?),
                ]
            }
        };
        self.loop_bufs.insert(state, b.clone());
        Ok(b)
    }

    /// A host `iterate` with maps fused into its first and last steps (`host::Fusion`).
    fn run_fused(
        &mut self,
        f: &crate::host::Fusion,
        init: usize,
        state: usize,
        body: &crate::host::Block,
        out: usize,
        steps: usize,
    ) -> Result<(), Error> {
        if steps == 0 {
            // Nothing to fuse with: the maps run on their own.
            if let Some((pre, _)) = f.pre {
                let r = self.launch_unit(pre, None)?;
                self.vals[init] = Some(r);
            }
            self.vals[out] = Some(self.val(init)?);
            if let Some((post, _, o)) = f.post {
                let r = self.launch_unit(post, None)?;
                self.vals[o] = Some(r);
            }
            return Ok(());
        }
        let loop_id = self.loops.len();
        self.loops.push(("iterate", steps));
        let outer = self.at;
        if let (1, Some(both), Some((_, _, o))) = (steps, f.both, f.post) {
            self.at = (loop_id, 0);
            let r = self.launch_unit(both, None)?;
            self.vals[o] = Some(r);
            self.at = outer;
            return Ok(());
        }
        let bufs = self.state_buffers(state)?;
        for i in 0..steps {
            self.at = (loop_id, i);
            let previous = |x: &Self| -> Result<HostVal, Error> {
                if i == 0 {
                    x.val(init)
                } else {
                    Ok(bufs[(i - 1) % 2].clone())
                }
            };
            match (f.pre, f.post) {
                (_, Some((_, last, o))) if i + 1 == steps => {
                    self.vals[state] = Some(previous(self)?);
                    let r = self.launch_unit(last, None)?;
                    self.vals[o] = Some(r);
                }
                (Some((_, first)), _) if i == 0 => {
                    self.launch_unit(first, Some(bufs[0].clone()))?;
                }
                _ => {
                    self.vals[state] = Some(previous(self)?);
                    self.block(body, Some(bufs[i % 2].clone()))?;
                }
            }
            self.session.flush().map_err(run_error)?;
        }
        self.vals[out] = Some(bufs[(steps - 1) % 2].clone());
        self.at = outer;
        Ok(())
    }

    fn launch_unit(&mut self, u: usize, dest: Option<HostVal>) -> Result<HostVal, Error> {
        let unit = &self.hp.units[u];
        let plan = unit
            .compiled
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a unit without kernels"))?;
        if self.units[u].is_none() {
            let rt = self.make_unit(u, plan)?;
            self.units[u] = Some(rt);
        }
        let mut rt = self.units[u].take().expect("made above");
        let r = self.launch_with(u, plan, &mut rt, dest);
        self.units[u] = Some(rt);
        if self.check_each && r.is_ok() {
            self.check_unit_flag(u)?;
        }
        r
    }

    fn make_unit(&mut self, u: usize, plan: &KernelPlan) -> Result<UnitRt, Error> {
        let env = Env::of_plan(plan, &self.unit_sizes(u)?)?;
        let exist_out = matches!(plan.result.ty, Type::Exists(_));
        if plan.result.lengths.is_some() && !exist_out {
            // `validate` refuses arrays of filter results that cross a section.
            return Err(Error::plain(format!(
                "internal: a part of a host program returns a filter result\n{}",
                codegen_opencl::BUG_NOTE
            )));
        }
        let names: Vec<&str> = plan.kernels.iter().map(|k| k.name.as_str()).collect();
        let prepared = self
            .session
            .prepare(&plan.source, "-cl-std=CL1.2", &names)
            .map_err(run_error)?;
        let (fixed, zeroed, out_bytes) = resident_buffers(&mut self.session, plan, &env)?;
        let mut zeroed_from = vec![];
        // The output's length (a filter result's) is zeroed too, whichever buffer holds it.
        let sized: Vec<(Option<host_runner::Resident>, usize)> = zeroed
            .iter()
            .map(|r| (Some(*r), self.session.bytes_of(*r)))
            .chain(exist_out.then_some((None, 4)))
            .collect();
        for (r, bytes) in sized {
            let zeros = self.session.alloc("zeros", bytes).map_err(run_error)?;
            self.session.upload(zeros, &vec![0; bytes]).map_err(run_error)?;
            zeroed_from.push((r, zeros));
        }
        let flag = self.session.alloc("e_flag", 4).map_err(run_error)?;
        self.session.zero(flag).map_err(run_error)?;
        Ok(UnitRt {
            prepared,
            fixed,
            zeroed: zeroed_from.iter().filter_map(|(r, z)| r.map(|r| (r, *z))).collect(),
            len_zeros: zeroed_from.iter().find(|(r, _)| r.is_none()).map(|(_, z)| *z),
            outs: [None, None],
            out_lens: [None, None],
            exist_out,
            out_bytes,
            turn: 0,
            flag,
            env,
            checked: false,
        })
    }

    fn launch_with(
        &mut self,
        u: usize,
        plan: &KernelPlan,
        rt: &mut UnitRt,
        dest: Option<HostVal>,
    ) -> Result<HostVal, Error> {
        let unit = &self.hp.units[u];
        let (out, out_len) = match dest {
            Some(HostVal::Dev(d)) => (d, None),
            Some(HostVal::Exist(d, l)) => (d, Some(l)),
            Some(HostVal::Scalar(_)) => return Err(Error::plain("internal: a unit writes into a scalar")),
            None => {
                rt.turn ^= 1;
                let out = match rt.outs[rt.turn] {
                    Some(r) => r,
                    None => {
                        let r = self.session.alloc("result", rt.out_bytes).map_err(run_error)?;
                        rt.outs[rt.turn] = Some(r);
                        r
                    }
                };
                let len = match (rt.exist_out, rt.out_lens[rt.turn]) {
                    (false, _) => None,
                    (true, Some(l)) => Some(l),
                    (true, None) => {
                        let l = self.session.alloc("result length", 4).map_err(run_error)?;
                        rt.out_lens[rt.turn] = Some(l);
                        Some(l)
                    }
                };
                (out, len)
            }
        };
        if rt.exist_out != out_len.is_some() {
            return Err(Error::plain(format!(
                "internal: unit {u}'s result and its destination disagree on being a filter result"
            )));
        }
        let len_zeroed = out_len.zip(rt.len_zeros);
        for (r, zeros) in rt.zeroed.iter().chain(&len_zeroed) {
            self.session.copy(*zeros, *r).map_err(run_error)?;
        }
        for k in &plan.kernels {
            let launch = launch_of(
                plan,
                k,
                &rt.env,
                host_runner::KernelArg::Buffer(rt.flag.0),
                |b| {
                    let r = match plan.memory.buffers[b].role {
                        Role::Input(p) => self.dev(unit.args[p])?,
                        Role::InputLength(p) => self.len_buf(unit.args[p])?,
                        Role::Output => out,
                        Role::OutputLength if out_len.is_some() => out_len.expect("checked"),
                        _ => *rt
                            .fixed
                            .get(&b)
                            .ok_or_else(|| Error::plain(format!("internal: buffer {b} of a unit has no storage")))?,
                    };
                    Ok(host_runner::KernelArg::Buffer(r.0))
                },
                |p| match self.val(unit.args[p])? {
                    HostVal::Scalar(v) => scalar_arg(&v),
                    v => Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
                },
            )?;
            if !rt.checked {
                self.session.check_launch(&rt.prepared, &launch).map_err(run_error)?;
            }
            if let Some(ev) = self
                .session
                .enqueue_resident(&rt.prepared, &launch)
                .map_err(run_error)?
            {
                if self.profile {
                    self.events
                        .push((self.at.0, self.at.1, format!("unit {u} {}", k.name), ev));
                }
            }
        }
        rt.checked = true;
        Ok(match out_len {
            Some(l) => HostVal::Exist(out, l),
            None => HostVal::Dev(out),
        })
    }

    /// The device-side checks of every unit, read once at the end (when `check_each` is not
    /// set). A failure sets `flag_failed`: the length it names may be a later step's, so
    /// `run_host` runs again checking every launch for the first failure and its own length.
    fn check_flags(&mut self) -> Result<(), Error> {
        for u in 0..self.units.len() {
            let r = self.check_unit_flag(u);
            if r.is_err() {
                self.flag_failed = true;
            }
            r?;
        }
        Ok(())
    }

    /// Decodes unit `u`'s error flag (every check `lift run` decodes), reading the failing
    /// length from the unit's buffer as it is now.
    fn check_unit_flag(&mut self, u: usize) -> Result<(), Error> {
        let (Some(rt), Some(plan)) = (&self.units[u], self.hp.units[u].compiled.plan.as_ref()) else {
            return Ok(());
        };
        if !plan.uses_error_flag() {
            return Ok(());
        }
        let b = self.session.read_resident(rt.flag, 0, 4).map_err(run_error)?;
        let flag = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let args = &self.hp.units[u].args;
        flag_error(plan, flag, &rt.env, |b| {
            // A checked length of a filter-result argument is in that argument's buffers.
            let r = match plan.memory.buffers[b].role {
                Role::InputLength(p) => Some(self.len_buf(args[p])?),
                _ => rt.fixed.get(&b).copied(),
            };
            read_int(&self.session, r)
        })
    }

    /// `--time` for a host program: per-kernel totals, each loop's steps and per-step device
    /// times, and the host's wall time against the sum of the kernels'.
    fn timing(&self, wall: std::time::Duration) -> Result<HostMeasure, Error> {
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut per_kernel: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
        let mut total = 0u64;
        let mut per_step: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut first_start = u64::MAX;
        let mut last_end = 0u64;
        for (l, st, k, ev) in &self.events {
            let ns = ev.ns().map_err(run_error)?;
            let (a, b) = ev.span_ns().map_err(run_error)?;
            first_start = first_start.min(a);
            last_end = last_end.max(b);
            total += ns;
            let e = per_kernel.entry(k.as_str()).or_default();
            e.0 += 1;
            e.1 += ns;
            if *l != usize::MAX {
                *per_step.entry((*l, *st)).or_default() += ns;
            }
        }
        Ok(HostMeasure {
            device: self.session.info().name.clone(),
            per_kernel: per_kernel
                .iter()
                .map(|(k, (n, ns))| (k.to_string(), *n, ms(*ns)))
                .collect(),
            loops: self
                .loops
                .iter()
                .enumerate()
                .map(|(l, (kind, steps))| {
                    let times = per_step.range((l, 0)..(l, *steps)).map(|(_, t)| ms(*t)).collect();
                    (*kind, *steps, times)
                })
                .collect(),
            kernel_ms: ms(total),
            span_ms: (last_end > first_start).then(|| ms(last_end - first_start)),
            wall_ms: wall.as_secs_f64() * 1e3,
        })
    }
}

/// One compiled program kept on one device across many runs (`devices`' host loops): its
/// kernels built once, every input in a resident buffer that is uploaded only when it changes,
/// and its result read back after each launch.
pub struct Resident {
    session: host_runner::Session,
    plan: KernelPlan,
    prepared: host_runner::Prepared,
    env: Env,
    /// Per parameter: its buffer (arrays) or value (scalars).
    params: Vec<HostVal>,
    /// Per plan buffer that is neither input nor output: its storage, and which are zeroed.
    fixed: BTreeMap<usize, host_runner::Resident>,
    zeroed: Vec<host_runner::Resident>,
    out: host_runner::Resident,
    out_dims: Vec<usize>,
    out_elem: Type,
    flag: host_runner::Resident,
}

impl Resident {
    /// Opens `device`, builds `plan`'s kernels, makes its buffers at `inputs`' sizes and
    /// uploads every input.
    pub fn new(plan: &KernelPlan, ty: &Type, inputs: &Inputs, device: Option<&str>) -> Result<Resident, Error> {
        let mut session = host_runner::Session::open(device).map_err(run_error)?;
        if plan.result.lengths.is_some() {
            return Err(Error::plain("internal: a resident program returning a filter result"));
        }
        let env = Env::of_plan(plan, &inputs.sizes)?;
        let names: Vec<&str> = plan.kernels.iter().map(|k| k.name.as_str()).collect();
        let prepared = session
            .prepare(&plan.source, "-cl-std=CL1.2", &names)
            .map_err(run_error)?;
        let (fixed, zeroed, out_bytes) = resident_buffers(&mut session, plan, &env)?;
        let out = session.alloc("result", out_bytes.max(1)).map_err(run_error)?;
        let flag = session.alloc("e_flag", 4).map_err(run_error)?;
        session.zero(flag).map_err(run_error)?;
        let (out_dims, out_elem) = shape(ty, &inputs.sizes)?;
        let mut r = Resident {
            session,
            plan: plan.clone(),
            prepared,
            env,
            params: vec![],
            fixed,
            zeroed,
            out,
            out_dims,
            out_elem,
            flag,
        };
        for (k, v) in inputs.values.iter().enumerate() {
            let hv = r.make_param(k, v)?;
            r.params.push(hv);
        }
        Ok(r)
    }

    fn param_type(&self, k: usize) -> Option<Type> {
        self.plan.memory.buffers.iter().find_map(|b| match b.role {
            Role::Input(p) if p == k => Some(b.elem.clone()),
            _ => None,
        })
    }

    fn make_param(&mut self, k: usize, v: &Value) -> Result<HostVal, Error> {
        match self.param_type(k) {
            Some(elem) => {
                let mut data = vec![];
                encode(v, &elem, &mut data)?;
                let r = self.session.alloc("parameter", data.len().max(1)).map_err(run_error)?;
                self.session.upload(r, &data).map_err(run_error)?;
                Ok(HostVal::Dev(r))
            }
            // A parameter without a buffer is a scalar argument (or unused).
            None => Ok(HostVal::Scalar(v.clone())),
        }
    }

    /// Replaces parameter `k`'s value (same length) on the device.
    pub fn set(&mut self, k: usize, v: &Value) -> Result<(), Error> {
        match self.params[k].clone() {
            HostVal::Dev(r) => {
                let elem = self.param_type(k).expect("a buffer parameter has a type");
                let mut data = Vec::with_capacity(self.session.bytes_of(r));
                encode(v, &elem, &mut data)?;
                self.session.upload(r, &data).map_err(run_error)
            }
            HostVal::Scalar(_) => {
                self.params[k] = HostVal::Scalar(v.clone());
                Ok(())
            }
            HostVal::Exist(..) => Err(Error::plain(format!("internal: parameter {k} is a filter result"))),
        }
    }

    /// Runs every kernel once and reads the result back.
    pub fn launch(&mut self) -> Result<Value, Error> {
        self.enqueue_kernels()?;
        let bytes = self
            .session
            .read_resident(self.out, 0, self.session.bytes_of(self.out))
            .map_err(run_error)?;
        self.check_flag()?;
        Ok(decode_dims(&bytes, &self.out_dims, &self.out_elem))
    }

    /// Zeroes what must start at zero and enqueues every kernel once: their events.
    fn enqueue_kernels(&mut self) -> Result<Vec<host_runner::LaunchEvent>, Error> {
        for r in &self.zeroed {
            self.session.zero(*r).map_err(run_error)?;
        }
        let mut events = vec![];
        for k in &self.plan.kernels {
            let launch = launch_of(
                &self.plan,
                k,
                &self.env,
                host_runner::KernelArg::Buffer(self.flag.0),
                |b| {
                    let r = match self.plan.memory.buffers[b].role {
                        Role::Input(p) => match &self.params[p] {
                            HostVal::Dev(r) => *r,
                            HostVal::Scalar(_) | HostVal::Exist(..) => {
                                return Err(Error::plain(format!("internal: input {p} is not on the device")))
                            }
                        },
                        Role::Output => self.out,
                        _ => *self.fixed.get(&b).ok_or_else(|| {
                            Error::plain(format!("internal: buffer {b} of a resident program has no storage"))
                        })?,
                    };
                    Ok(host_runner::KernelArg::Buffer(r.0))
                },
                |p| match &self.params[p] {
                    HostVal::Scalar(v) => scalar_arg(v),
                    v => Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
                },
            )?;
            self.session.check_launch(&self.prepared, &launch).map_err(run_error)?;
            events.extend(
                self.session
                    .enqueue_resident(&self.prepared, &launch)
                    .map_err(run_error)?,
            );
        }
        Ok(events)
    }

    /// The error of the device-side checks, read after the kernels ran.
    fn check_flag(&self) -> Result<(), Error> {
        if self.plan.uses_error_flag() {
            let b = self.session.read_resident(self.flag, 0, 4).map_err(run_error)?;
            let flag = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            flag_error(&self.plan, flag, &self.env, |b| {
                read_int(&self.session, self.fixed.get(&b).copied())
            })?;
        }
        Ok(())
    }
}

/// What one profiled launch of a [`Resident`] program took: its kernels on the device's
/// clock, and on the host the blocking read of its result and the decoding of those bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResidentTimes {
    pub kernel_ns: u64,
    pub download_ms: f64,
    pub decode_ms: f64,
}

/// Measured runs (`lift bench --devices`): an input's bytes are made once, before the timed
/// runs, so that a timed upload is the blocking write alone.
impl Resident {
    /// Parameter `k`'s value as the bytes of its buffer (`None`: a scalar argument).
    pub fn encode_param(&self, k: usize, v: &Value) -> Result<Option<Vec<u8>>, Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => {
                let elem = self.param_type(k).expect("a buffer parameter has a type");
                let mut data = Vec::with_capacity(self.session.bytes_of(*r));
                encode(v, &elem, &mut data)?;
                Ok(Some(data))
            }
            Some(HostVal::Scalar(_)) => Ok(None),
            Some(HostVal::Exist(..)) | None => Err(Error::plain(format!(
                "internal: a resident program has no parameter {k}"
            ))),
        }
    }

    /// Blocking upload of bytes made by [`Resident::encode_param`] into parameter `k`'s buffer.
    pub fn upload_param(&mut self, k: usize, data: &[u8]) -> Result<(), Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => self.session.upload(*r, data).map_err(run_error),
            _ => Err(Error::plain(format!("internal: parameter {k} has no buffer"))),
        }
    }

    /// [`Resident::launch`] with each phase timed: the queue is drained after the kernels so
    /// that the read that follows is the transfer alone.
    pub fn launch_profiled(&mut self) -> Result<(Value, ResidentTimes), Error> {
        let events = self.enqueue_kernels()?;
        self.session.finish().map_err(run_error)?;
        let mut times = ResidentTimes::default();
        for e in &events {
            times.kernel_ns += e.ns().map_err(run_error)?;
        }
        let t = std::time::Instant::now();
        let bytes = self
            .session
            .read_resident(self.out, 0, self.session.bytes_of(self.out))
            .map_err(run_error)?;
        times.download_ms = t.elapsed().as_secs_f64() * 1e3;
        self.check_flag()?;
        let t = std::time::Instant::now();
        let value = decode_dims(&bytes, &self.out_dims, &self.out_elem);
        times.decode_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok((value, times))
    }
}

/// The error of a failed device-side check of a filter result's length `n`: where the length is
/// consumed, and where the filter is.
fn length_check_error(c: &codegen_opencl::LengthCheck, env: &Env, n: i32) -> Error {
    let lookup = |v: &str| {
        if v == c.length.0 {
            Some(i64::from(n))
        } else {
            env.values.get(v).copied()
        }
    };
    let is_length = |e: &arith::ArithExpr| e.as_var().is_some_and(|(v, _)| v == c.length.0);
    let (message, label) = match &c.check.kind {
        typeck::CheckKind::Divisible { len, by, what } => {
            let b = by.eval(&lookup).unwrap_or(0);
            let message = if is_length(len) {
                format!("the result of filterGlb has {n} elements, not a multiple of {b} as {what} needs")
            } else {
                let l = len.eval(&lookup).unwrap_or(0);
                format!("the result of filterGlb has {n} elements, so {what} gets {l}, not a multiple of {b}")
            };
            (message, format!("{what} needs a multiple of {b}"))
        }
        typeck::CheckKind::AtLeast { len, min, what } => {
            let m = min.eval(&lookup).unwrap_or(0);
            let message = if is_length(len) {
                format!("the result of filterGlb has {n} elements, fewer than the {m} that {what} needs")
            } else {
                let l = len.eval(&lookup).unwrap_or(0);
                format!("the result of filterGlb has {n} elements, so {what} gets {l}, fewer than {m}")
            };
            (message, format!("{what} needs at least {m}"))
        }
        typeck::CheckKind::Fits { len } => (format!("the length {len} does not fit a 64-bit integer"), String::new()),
    };
    Error::Invalid(vec![
        Diagnostic::new(c.check.span, format!("{message} (detected on the device)")).with_label(label),
        Diagnostic::new(c.filter, format!("the filterGlb whose result has {n} elements"))
            .with_label(format!("kept {n} elements")),
    ])
}

/// The buffers a plan keeps on the device for a resident run: temporaries, and lengths and
/// scratch (to be zeroed before every launch) by plan buffer index; and the output's size in bytes
/// (inputs and the output are bound per launch).
type ResidentBuffers = (
    BTreeMap<usize, host_runner::Resident>,
    Vec<host_runner::Resident>,
    usize,
);

fn resident_buffers(
    session: &mut host_runner::Session,
    plan: &KernelPlan,
    env: &Env,
) -> Result<ResidentBuffers, Error> {
    let mut fixed = BTreeMap::new();
    let mut zeroed = vec![];
    let mut out_bytes = 0;
    for (i, b) in plan.global_buffers() {
        let n = env.eval(&b.len, &format!("the length of buffer {}", b.name))?;
        let (esz, _) = layout(&b.elem);
        let bytes = n
            .checked_mul(esz)
            .ok_or_else(|| Error::plain(format!("buffer {} is too large", b.name)))?;
        match b.role {
            Role::Input(_) | Role::InputLength(_) => {}
            Role::Output => out_bytes = bytes,
            Role::Temp => {
                fixed.insert(i, session.alloc(&b.name, bytes).map_err(run_error)?);
            }
            Role::OutputLength | Role::TempLength | Role::Scratch => {
                let r = session.alloc(&b.name, bytes).map_err(run_error)?;
                fixed.insert(i, r);
                zeroed.push(r);
            }
        }
    }
    Ok((fixed, zeroed, out_bytes))
}

/// The launch of kernel `k` at the sizes in `env`: `buffer` binds a plan buffer, `flag` is the
/// error flag's binding and `param` a scalar parameter's (the one translation of the plan's
/// arguments, whether the buffers are a run's, a host unit's or a resident program's).
fn launch_of(
    plan: &KernelPlan,
    k: &codegen_opencl::Kernel,
    env: &Env,
    flag: host_runner::KernelArg,
    mut buffer: impl FnMut(usize) -> Result<host_runner::KernelArg, Error>,
    mut param: impl FnMut(usize) -> Result<host_runner::KernelArg, Error>,
) -> Result<Launch, Error> {
    let mut args = Vec::with_capacity(k.args.len());
    for a in &k.args {
        args.push(match a {
            KernelArg::Buffer(b) => buffer(*b)?,
            KernelArg::ErrorFlag => flag,
            KernelArg::Local(b) => {
                let b = &plan.memory.buffers[*b];
                let n = env.eval(&b.len, &format!("the length of local array {}", b.name))?;
                let (esz, _) = layout(&b.elem);
                host_runner::KernelArg::Local(
                    n.checked_mul(esz)
                        .ok_or_else(|| Error::plain(format!("local array {} is too large", b.name)))?,
                )
            }
            KernelArg::Size(c) => host_runner::KernelArg::I32(
                i32::try_from(env.values[c]).map_err(|_| Error::plain(format!("size {c} does not fit an int")))?,
            ),
            KernelArg::Param(p) => param(*p)?,
        });
    }
    let global = k
        .global
        .iter()
        .map(|g| env.eval(g, "the global size"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Launch {
        kernel: k.name.clone(),
        args,
        global,
        local: k.local.clone(),
    })
}

/// The int at the start of a resident buffer (a filter result's length); `None`: the plan has
/// no storage for it, which is our bug.
fn read_int(session: &host_runner::Session, r: Option<host_runner::Resident>) -> Result<i32, Error> {
    let r = r.ok_or_else(|| {
        Error::plain(format!(
            "internal: a checked length has no buffer\n{}",
            codegen_opencl::BUG_NOTE
        ))
    })?;
    let b = session.read_resident(r, 0, 4).map_err(run_error)?;
    Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A scalar parameter as a kernel argument.
fn scalar_arg(v: &Value) -> Result<host_runner::KernelArg, Error> {
    Ok(match v {
        Value::Float(f) => host_runner::KernelArg::F32(*f),
        Value::Double(d) => host_runner::KernelArg::F64(*d),
        Value::Int(i) => host_runner::KernelArg::I32(*i),
        Value::Bool(b) => host_runner::KernelArg::I32(i32::from(*b)),
        Value::Uint(u) => host_runner::KernelArg::U32(*u),
        Value::Long(l) => host_runner::KernelArg::I64(*l),
        Value::Ulong(u) => host_runner::KernelArg::U64(*u),
        v => return Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
    })
}

/// The error a kernel's flag reports, whichever check set it: a condition on a filter result's
/// length (`read_length` reads that length from the plan buffer, by index, that holds it) or an
/// `at` bounds check. Every path that runs kernels decodes its flag here, so a check fails with
/// the same message in `lift run`, a host section and a resident program.
fn flag_error(
    plan: &KernelPlan,
    flag: i32,
    env: &Env,
    read_length: impl FnOnce(usize) -> Result<i32, Error>,
) -> Result<(), Error> {
    if let Some(c) = plan.length_checks.iter().find(|c| c.flag as i32 + 1 == flag) {
        let n = read_length(c.length.1)?;
        return Err(length_check_error(c, env, n));
    }
    at_check(plan, flag)
}

/// The error of a kernel's flag when an `at` bounds check failed (flag `i + 1` names the plan's
/// check `i`).
fn at_check(plan: &KernelPlan, flag: i32) -> Result<(), Error> {
    if flag <= 0 {
        return Ok(());
    }
    let span = plan.checks.get((flag - 1) as usize).copied().unwrap_or_default();
    Err(Error::Source(Diagnostic::new(
        span,
        "index out of range in `at` (detected on the device)",
    )))
}
