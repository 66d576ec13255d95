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
fn member_layout(t: &Type) -> (usize, usize) {
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
fn encode(v: &Value, t: &Type, out: &mut Vec<u8>) -> Result<(), Error> {
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
    match s {
        Scalar::Float => Value::Float(f32::from_le_bytes(w4())),
        Scalar::Int => Value::Int(i32::from_le_bytes(w4())),
        Scalar::Bool => Value::Bool(i32::from_le_bytes(w4()) != 0),
        Scalar::Double => Value::Double(f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
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
    let mut env = Env {
        values: BTreeMap::new(),
    };
    for (user, c) in &plan.sizes {
        if let Some(v) = inputs.sizes.get(user) {
            env.values.insert(c.clone(), *v);
        }
    }
    for (c, cap) in &plan.capacities {
        let v = env.eval(cap, "the capacity")?;
        env.values.insert(c.clone(), v as i64);
    }
    let mut host_index = BTreeMap::new();
    let mut buffers = vec![];
    for (i, b) in plan.global_buffers() {
        let n = env.eval(&b.len, &format!("the length of buffer {}", b.name))?;
        let (esz, _) = layout(&b.elem);
        let bytes = n
            .checked_mul(esz)
            .ok_or_else(|| Error::plain(format!("buffer {} is too large", b.name)))?;
        let init = match b.role {
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
        let mut args = vec![];
        for a in &k.args {
            args.push(match a {
                KernelArg::Buffer(b) => host_runner::KernelArg::Buffer(host_index[b]),
                KernelArg::ErrorFlag => host_runner::KernelArg::Buffer(err_flag),
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
                KernelArg::Param(p) => match &inputs.values[*p] {
                    Value::Float(f) => host_runner::KernelArg::F32(*f),
                    Value::Double(d) => host_runner::KernelArg::F64(*d),
                    Value::Int(i) => host_runner::KernelArg::I32(*i),
                    Value::Bool(b) => host_runner::KernelArg::I32(i32::from(*b)),
                    v => return Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
                },
            });
        }
        let global = k
            .global
            .iter()
            .map(|g| env.eval(g, "the global size"))
            .collect::<Result<Vec<_>, _>>()?;
        launches.push(Launch {
            kernel: k.name.clone(),
            args,
            global,
            local: k.local.clone(),
        });
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
        (_, None) => reads.push(ReadSpec::Whole(data)),
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
    let mut session = host_runner::Session::open(device).map_err(|e| Error::plain(e.to_string()))?;
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
    if let Some((c, at)) = (plan.length_checks.iter().zip(&length_reads)).find(|(c, _)| c.flag as i32 + 1 == flag) {
        let n = out.reads[*at]
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(i32::from_le_bytes)
            .unwrap_or(0);
        return Err(length_check_error(c, &env, n));
    }
    if flag > 0 {
        let span = plan.checks[(flag - 1) as usize];
        return Err(Error::Source(Diagnostic::new(
            span,
            "index out of range in `at` (detected on the device)",
        )));
    }
    let value = match (&result.ty, result.lengths) {
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
    Ok(Measured {
        value,
        timing,
        device: session.info().name.clone(),
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
