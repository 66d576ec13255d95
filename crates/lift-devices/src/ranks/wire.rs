//! Values as bytes between MPI ranks: a self-describing encoding (each node's kind, lengths
//! carried), so that a receiver needs no type to read a part, and parts of different lengths
//! (a filter's) travel as they are. Arrays of one scalar kind (the bulk of every input and
//! result) are one header and their little-endian elements, as a device buffer holds them.

use ir::interp::Value;
use lift_compile::Error;

const FLOAT: u8 = 0;
const DOUBLE: u8 = 1;
const INT: u8 = 2;
const BOOL: u8 = 3;
const UINT: u8 = 4;
const LONG: u8 = 5;
const ULONG: u8 = 6;
const VECTOR: u8 = 7;
const TUPLE: u8 = 8;
const ARRAY: u8 = 9;
/// An array whose elements are all scalars of the kind in the next byte.
const SCALARS: u8 = 10;

/// The bytes of `v` (appended to `out`). Only values computed on a device or read from data
/// travel: an interpreter's bounded value ([`Value::Approx`]) is refused.
pub fn encode(v: &Value, out: &mut Vec<u8>) -> Result<(), Error> {
    match v {
        Value::Array(xs) => {
            if let Some(kind) = scalar_kind(xs) {
                out.push(SCALARS);
                out.push(kind);
                out.extend((xs.len() as u64).to_le_bytes());
                for x in xs {
                    scalar_bytes(x, out);
                }
                return Ok(());
            }
            out.push(ARRAY);
            out.extend((xs.len() as u64).to_le_bytes());
            xs.iter().try_for_each(|x| encode(x, out))
        }
        Value::Vector(xs) | Value::Tuple(xs) => {
            out.push(if matches!(v, Value::Vector(_)) { VECTOR } else { TUPLE });
            out.extend((xs.len() as u64).to_le_bytes());
            xs.iter().try_for_each(|x| encode(x, out))
        }
        Value::Approx(_) => Err(Error::plain(
            "internal: an interpreter's bounded value cannot be sent to another rank",
        )),
        scalar @ (Value::Float(_)
        | Value::Double(_)
        | Value::Int(_)
        | Value::Bool(_)
        | Value::Uint(_)
        | Value::Long(_)
        | Value::Ulong(_)) => {
            out.push(kind_of(scalar).expect("a scalar"));
            scalar_bytes(scalar, out);
            Ok(())
        }
    }
}

/// [`encode`] into a new buffer.
pub fn to_bytes(v: &Value) -> Result<Vec<u8>, Error> {
    let mut out = vec![];
    encode(v, &mut out)?;
    Ok(out)
}

/// The value [`encode`] wrote at the start of `b`, and the bytes after it.
pub fn decode(b: &[u8]) -> Result<(Value, &[u8]), Error> {
    let bad = || Error::plain("internal: a value received from another rank is cut short or malformed");
    let (&tag, rest) = b.split_first().ok_or_else(bad)?;
    fn len(b: &[u8]) -> Option<(usize, &[u8])> {
        let (n, rest) = b.split_first_chunk::<8>()?;
        Some((usize::try_from(u64::from_le_bytes(*n)).ok()?, rest))
    }
    match tag {
        SCALARS => {
            let (&kind, rest) = rest.split_first().ok_or_else(bad)?;
            let (n, mut rest) = len(rest).ok_or_else(bad)?;
            let width = width(kind).ok_or_else(bad)?;
            if rest.len() / width < n {
                return Err(bad());
            }
            let mut xs = Vec::with_capacity(n);
            for _ in 0..n {
                let (x, r) = scalar(kind, rest).ok_or_else(bad)?;
                xs.push(x);
                rest = r;
            }
            Ok((Value::Array(xs), rest))
        }
        ARRAY | VECTOR | TUPLE => {
            let (n, mut rest) = len(rest).ok_or_else(bad)?;
            // (every element takes at least one byte: a length beyond the bytes is malformed)
            if n > rest.len() {
                return Err(bad());
            }
            let mut xs = Vec::with_capacity(n);
            for _ in 0..n {
                let (x, r) = decode(rest)?;
                xs.push(x);
                rest = r;
            }
            Ok((
                match tag {
                    ARRAY => Value::Array(xs),
                    VECTOR => Value::Vector(xs),
                    _ => Value::Tuple(xs),
                },
                rest,
            ))
        }
        kind => scalar(kind, rest).ok_or_else(bad),
    }
}

/// The one value in `b`.
pub fn from_bytes(b: &[u8]) -> Result<Value, Error> {
    match decode(b)? {
        (v, []) => Ok(v),
        _ => Err(Error::plain(
            "internal: a value received from another rank has bytes left over",
        )),
    }
}

/// The bytes of `v`'s scalars as a device buffer holds them (the payload of a transfer,
/// without [`encode`]'s headers).
pub fn payload(v: &Value) -> usize {
    match v {
        Value::Array(xs) | Value::Vector(xs) | Value::Tuple(xs) => xs.iter().map(payload).sum(),
        Value::Float(_) | Value::Int(_) | Value::Uint(_) => 4,
        Value::Double(_) | Value::Long(_) | Value::Ulong(_) => 8,
        Value::Bool(_) => 1,
        Value::Approx(_) => 0,
    }
}

/// A value of type `t` at these sizes, every scalar zero: a parameter a rank's program declares
/// and never reads (a loop step's copy of the loop's own input) is made where it is needed
/// instead of sent.
pub fn zeros(t: &ir::Type, sizes: &std::collections::BTreeMap<String, i64>) -> Result<Value, Error> {
    use ir::{Scalar, Type};
    let scalar = |s: &Scalar| match s {
        Scalar::Float => Value::Float(0.0),
        Scalar::Double => Value::Double(0.0),
        Scalar::Int => Value::Int(0),
        Scalar::Bool => Value::Bool(false),
        Scalar::Uint => Value::Uint(0),
        Scalar::Long => Value::Long(0),
        Scalar::Ulong => Value::Ulong(0),
    };
    Ok(match t {
        Type::Scalar(s) => scalar(s),
        Type::Vector(s, w) => Value::Vector(vec![scalar(s); usize::from(*w)]),
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| zeros(t, sizes)).collect::<Result<_, _>>()?),
        Type::Array(e, n) => {
            let n = n
                .eval(&|name| sizes.get(name).copied())
                .map_err(|e| Error::plain(format!("internal: the length of an unread parameter: {e}")))?;
            let one = zeros(e, sizes)?;
            Value::Array(vec![one; usize::try_from(n).unwrap_or(0)])
        }
        Type::Exists(_) | Type::Fun(..) => {
            return Err(Error::plain(format!("internal: an unread parameter of type {t}")))
        }
    })
}

fn kind_of(v: &Value) -> Option<u8> {
    match v {
        Value::Float(_) => Some(FLOAT),
        Value::Double(_) => Some(DOUBLE),
        Value::Int(_) => Some(INT),
        Value::Bool(_) => Some(BOOL),
        Value::Uint(_) => Some(UINT),
        Value::Long(_) => Some(LONG),
        Value::Ulong(_) => Some(ULONG),
        Value::Vector(_) | Value::Tuple(_) | Value::Array(_) | Value::Approx(_) => None,
    }
}

/// The one scalar kind of every element of `xs` (none for an empty array: it is an `ARRAY`).
fn scalar_kind(xs: &[Value]) -> Option<u8> {
    let kind = kind_of(xs.first()?)?;
    xs.iter().all(|x| kind_of(x) == Some(kind)).then_some(kind)
}

fn width(kind: u8) -> Option<usize> {
    match kind {
        BOOL => Some(1),
        FLOAT | INT | UINT => Some(4),
        DOUBLE | LONG | ULONG => Some(8),
        _ => None,
    }
}

fn scalar_bytes(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Float(x) => out.extend(x.to_le_bytes()),
        Value::Double(x) => out.extend(x.to_le_bytes()),
        Value::Int(x) => out.extend(x.to_le_bytes()),
        Value::Bool(x) => out.push(u8::from(*x)),
        Value::Uint(x) => out.extend(x.to_le_bytes()),
        Value::Long(x) => out.extend(x.to_le_bytes()),
        Value::Ulong(x) => out.extend(x.to_le_bytes()),
        // (callers pass scalars only)
        Value::Vector(_) | Value::Tuple(_) | Value::Array(_) | Value::Approx(_) => {}
    }
}

fn scalar(kind: u8, b: &[u8]) -> Option<(Value, &[u8])> {
    let w = width(kind)?;
    let (x, rest) = (b.get(..w)?, &b[w..]);
    let v = match kind {
        FLOAT => Value::Float(f32::from_le_bytes(x.try_into().ok()?)),
        DOUBLE => Value::Double(f64::from_le_bytes(x.try_into().ok()?)),
        INT => Value::Int(i32::from_le_bytes(x.try_into().ok()?)),
        BOOL => Value::Bool(x[0] != 0),
        UINT => Value::Uint(u32::from_le_bytes(x.try_into().ok()?)),
        LONG => Value::Long(i64::from_le_bytes(x.try_into().ok()?)),
        ULONG => Value::Ulong(u64::from_le_bytes(x.try_into().ok()?)),
        _ => return None,
    };
    Some((v, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_comes_back_as_it_was_sent() {
        let f = |x: f32| Value::Float(x);
        let values = [
            Value::Array(vec![f(1.5), f(-0.0), f(f32::MAX)]),
            Value::Array(vec![Value::Array(vec![f(1.0), f(2.0)]), Value::Array(vec![f(3.0)])]),
            Value::Array(vec![]),
            Value::Array(vec![Value::Array(vec![]), Value::Array(vec![Value::Int(-3)])]),
            Value::Array(vec![
                Value::Tuple(vec![Value::Int(7), Value::Vector(vec![f(1.0), f(2.0), f(3.0)])]),
                Value::Tuple(vec![Value::Int(8), Value::Vector(vec![f(4.0), f(5.0), f(6.0)])]),
            ]),
            Value::Array(vec![Value::Bool(true), Value::Bool(false)]),
            Value::Array(vec![Value::Double(1e300), Value::Double(-2.5)]),
            Value::Array(vec![Value::Long(-1), Value::Long(i64::MAX)]),
            Value::Array(vec![Value::Ulong(u64::MAX), Value::Ulong(0)]),
            Value::Array(vec![Value::Uint(9), Value::Uint(u32::MAX)]),
            // (mixed kinds fall back to one tag per element)
            Value::Array(vec![Value::Int(1), Value::Uint(2)]),
            Value::Double(0.25),
        ];
        for v in values {
            let b = to_bytes(&v).expect("encodes");
            assert_eq!(from_bytes(&b).expect("decodes"), v);
        }
    }

    #[test]
    fn a_cut_or_lengthened_message_is_an_error_not_a_panic() {
        let v = Value::Array(vec![Value::Array(vec![Value::Float(1.0), Value::Float(2.0)])]);
        let b = to_bytes(&v).expect("encodes");
        for cut in 0..b.len() {
            assert!(from_bytes(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(from_bytes(&longer).is_err());
        // A length far beyond the bytes.
        let mut huge = vec![ARRAY];
        huge.extend(u64::MAX.to_le_bytes());
        assert!(from_bytes(&huge).is_err());
    }

    #[test]
    fn an_array_of_floats_costs_its_elements_and_one_header() {
        let v = Value::Array((0..1000).map(|i| Value::Float(i as f32)).collect());
        assert_eq!(to_bytes(&v).expect("encodes").len(), 1 + 1 + 8 + 4000);
    }
}
