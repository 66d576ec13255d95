//! Deterministic random inputs for tests, `lift bench` and `lift tune`: as values, or (lean) as
//! the bytes of their device buffers where the interpreter will not read them.

use crate::load::plural;
use crate::{DataError, Inputs, Res, MAX_ELEMENTS};
use ir::interp::Value;
use ir::rng::XorShift;
use ir::{ArithExpr, Program, Scalar, Type};
use std::collections::BTreeMap;

// Random inputs

/// Deterministic inputs for every parameter: floats uniform in [0, 1), ints in [0, 100),
/// bools fair. `sizes` must give every declared size variable (each at least 1).
pub fn random_inputs(prog: &Program, sizes: &BTreeMap<String, i64>, seed: u64) -> Res<Inputs> {
    random_inputs_lean(prog, sizes, seed, true).map(|(inputs, _)| inputs)
}

/// [`random_inputs`], where `keep_values` is false, with every parameter that is an array (of
/// arrays ...) of one scalar type given as the bytes of its OpenCL buffer instead (row-major;
/// `float`, `double` and `int` little-endian, `bool` as `int`) and an empty array in its place
/// among the values: the same numbers at a quarter of the memory or less, for runs whose result
/// is not compared with the interpreter (a 8192² input takes 2 GiB as values, 256 MiB as bytes).
/// The other parameters, and every one where `keep_values`, are values (their bytes `None`).
pub fn random_inputs_lean(
    prog: &Program,
    sizes: &BTreeMap<String, i64>,
    seed: u64,
    keep_values: bool,
) -> Res<(Inputs, Vec<Option<Vec<u8>>>)> {
    for name in sizes.keys() {
        if !prog.sizes.contains(name) {
            let mut e = DataError::new(format!("the program has no size variable `{name}`"));
            if let Some(c) = ir::diag::closest(name, prog.sizes.iter().map(String::as_str)) {
                e = e.note(format!("did you mean `{c}`?"));
            }
            return Err(e);
        }
    }
    let missing: Vec<&str> = prog
        .sizes
        .iter()
        .filter(|s| !sizes.contains_key(*s))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(DataError::new(format!(
            "random inputs need a value for the size variable{} {}",
            plural(missing.len()),
            missing.join(", ")
        ))
        .note(format!("give it with --size, e.g. --size {}=1024", missing[0])));
    }
    if let Some((n, v)) = sizes.iter().find(|(_, v)| **v < 1) {
        return Err(DataError::new(format!(
            "{n} is {v}, but size variables must be at least 1"
        )));
    }
    let mut rng = XorShift::new(seed);
    let env = |name: &str| sizes.get(name).copied();
    let mut values = vec![];
    let mut bytes = vec![];
    for p in &prog.params {
        let name = &prog.var(p.var).name;
        let count = element_count(&p.ty, &env, name)?;
        if count > MAX_ELEMENTS {
            return Err(DataError::new(format!(
                "`{name}` would have {count} elements, more than the {MAX_ELEMENTS} allowed for generated inputs"
            )));
        }
        match lean_element(&p.ty).filter(|_| !keep_values) {
            Some(elem) => {
                // (one element after another in row-major order, as `random_value` draws them)
                let per = element_count(elem, &env, name)?.max(1);
                let mut out = Vec::with_capacity((count / per) as usize * crate::layout::layout(elem).0);
                random_bytes(&p.ty, &env, &mut rng, name, &mut out)?;
                values.push(Value::Array(vec![]));
                bytes.push(Some(out));
            }
            None => {
                values.push(random_value(&p.ty, &env, &mut rng, name)?);
                bytes.push(None);
            }
        }
    }
    Ok((
        Inputs {
            values,
            sizes: sizes.clone(),
        },
        bytes,
    ))
}

/// How many scalars the parameters of `prog` hold at `sizes` (what random inputs generate).
pub fn input_elements(prog: &Program, sizes: &BTreeMap<String, i64>) -> Res<u64> {
    let env = |name: &str| sizes.get(name).copied();
    let mut sum = 0u64;
    for p in &prog.params {
        sum = sum.saturating_add(element_count(&p.ty, &env, &prog.var(p.var).name)?);
    }
    Ok(sum)
}

/// The element of `ty` when it is an array (of arrays) of scalars, of vectors or of tuples of
/// scalars, vectors and such tuples: one buffer of such elements (a struct each, `backend`'s
/// layout), whose bytes [`random_bytes`] makes one scalar at a time; `None` for every other
/// type (a tuple holding an array is stored as one buffer per component). A 33.5 M-element
/// array of pairs (nn) took 10.6 s of a 25 s tune budget on the H200 host as values.
fn lean_element(ty: &Type) -> Option<&Type> {
    fn member(t: &Type) -> bool {
        match t {
            Type::Scalar(_) | Type::Vector(..) => true,
            Type::Tuple(ts) => ts.iter().all(member),
            Type::Array(..) | Type::Exists(_) | Type::Fun(..) => false,
        }
    }
    match ty {
        Type::Array(e, _) => match &**e {
            e @ Type::Array(..) => lean_element(e),
            e @ (Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_)) => Some(e).filter(|e| member(e)),
            Type::Exists(_) | Type::Fun(..) => None,
        },
        Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Exists(_) | Type::Fun(..) => None,
    }
}

/// The buffer bytes of a random value of `ty` (see [`lean_element`]), drawn in the order
/// [`random_value`] draws it, laid out as `layout::encode` lays the value out: a buffer's
/// vectors with their lanes packed (`vload3` reads 12 bytes), a tuple as an OpenCL C struct
/// whose members are aligned to their size, a 3-lane vector member taking 4 lanes.
fn random_bytes(
    ty: &Type,
    env: &dyn Fn(&str) -> Option<i64>,
    rng: &mut XorShift,
    name: &str,
    out: &mut Vec<u8>,
) -> Res<()> {
    match ty {
        Type::Array(e, n) => {
            let n = array_len(n, env, name)?;
            // arrays of scalars (the common case) without a call per element: 10^8 floats in
            // about 0.6 s here, against 2.1 s through `random_value` and `encode`
            if let Type::Scalar(s) = **e {
                (0..n).for_each(|_| random_scalar_bytes(rng, s, out));
                return Ok(());
            }
            (0..n).try_for_each(|_| random_bytes(e, env, rng, name, out))
        }
        Type::Scalar(s) => {
            random_scalar_bytes(rng, *s, out);
            Ok(())
        }
        Type::Vector(s, w) => {
            (0..*w).for_each(|_| random_scalar_bytes(rng, *s, out));
            Ok(())
        }
        Type::Tuple(ts) => {
            let start = out.len();
            for t in ts {
                let (size, align) = crate::layout::member_layout(t);
                out.resize(start + (out.len() - start).div_ceil(align) * align, 0);
                let field = out.len();
                random_bytes(t, env, rng, name, out)?;
                out.resize(field + size, 0);
            }
            let (size, _) = crate::layout::member_layout(ty);
            out.resize(start + size, 0);
            Ok(())
        }
        Type::Exists(_) | Type::Fun(..) => Err(DataError::new(format!(
            "cannot generate a random value of type {ty} for `{name}`"
        ))),
    }
}

/// The buffer bytes of the scalar [`random_scalar`] would draw.
fn random_scalar_bytes(rng: &mut XorShift, s: Scalar, out: &mut Vec<u8>) {
    match random_scalar(rng, s) {
        Value::Float(f) => out.extend(f.to_le_bytes()),
        Value::Double(d) => out.extend(d.to_le_bytes()),
        Value::Int(i) => out.extend(i.to_le_bytes()),
        Value::Bool(b) => out.extend(i32::from(b).to_le_bytes()),
        Value::Uint(u) => out.extend(u.to_le_bytes()),
        Value::Long(l) => out.extend(l.to_le_bytes()),
        Value::Ulong(u) => out.extend(u.to_le_bytes()),
        Value::Vector(_) | Value::Tuple(_) | Value::Array(_) | Value::Approx(_) => {
            unreachable!("random_scalar draws scalars")
        }
    }
}

fn array_len(n: &ArithExpr, env: &dyn Fn(&str) -> Option<i64>, name: &str) -> Res<u64> {
    let v = n
        .eval(env)
        .map_err(|e| DataError::new(format!("cannot evaluate the length {n} of `{name}`: {e}")))?;
    u64::try_from(v).map_err(|_| DataError::new(format!("the length {n} of `{name}` is {v}, which is negative")))
}

fn element_count(ty: &Type, env: &dyn Fn(&str) -> Option<i64>, name: &str) -> Res<u64> {
    Ok(match ty {
        Type::Scalar(_) => 1,
        Type::Vector(_, w) => u64::from(*w),
        Type::Tuple(ts) => {
            let mut sum = 0u64;
            for t in ts {
                sum = sum.saturating_add(element_count(t, env, name)?);
            }
            sum
        }
        Type::Array(e, n) => array_len(n, env, name)?.saturating_mul(element_count(e, env, name)?),
        Type::Exists(_) | Type::Fun(..) => {
            return Err(DataError::new(format!(
                "cannot generate a random value of type {ty} for `{name}`"
            )))
        }
    })
}

fn random_value(ty: &Type, env: &dyn Fn(&str) -> Option<i64>, rng: &mut XorShift, name: &str) -> Res<Value> {
    Ok(match ty {
        Type::Scalar(s) => random_scalar(rng, *s),
        Type::Vector(s, w) => Value::Vector((0..*w).map(|_| random_scalar(rng, *s)).collect()),
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| random_value(t, env, rng, name)).collect::<Res<_>>()?),
        Type::Array(e, n) => {
            let n = array_len(n, env, name)?;
            Value::Array((0..n).map(|_| random_value(e, env, rng, name)).collect::<Res<_>>()?)
        }
        Type::Exists(_) | Type::Fun(..) => {
            return Err(DataError::new(format!(
                "cannot generate a random value of type {ty} for `{name}`"
            )))
        }
    })
}

/// A random scalar of type `s`.
fn random_scalar(rng: &mut XorShift, s: Scalar) -> Value {
    let r = rng.next_u64();
    match s {
        // The top 24 / 53 bits give every representable multiple of 2^-24 / 2^-53 in [0, 1).
        Scalar::Float => Value::Float((r >> 40) as f32 / (1u64 << 24) as f32),
        Scalar::Double => Value::Double((r >> 11) as f64 / (1u64 << 53) as f64),
        Scalar::Int => Value::Int(((r >> 32) % 100) as i32),
        Scalar::Bool => Value::Bool(r >> 63 == 1),
        // every bit pattern: wrapping, shifts and comparisons see all of them
        Scalar::Uint => Value::Uint((r >> 32) as u32),
        Scalar::Long => Value::Long(r as i64),
        Scalar::Ulong => Value::Ulong(r),
    }
}
