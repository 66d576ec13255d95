//! The byte layout of values in OpenCL buffers: what the runtime writes for inputs and reads back
//! for results, and what lean random inputs are generated as directly.

use crate::{DataError, Res};
use ir::interp::Value;
use ir::{Scalar, Type};

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
pub fn member_layout(t: &Type) -> (usize, usize) {
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

fn encode_scalar(v: &Value, s: Scalar, out: &mut Vec<u8>) -> Res<()> {
    match (v, s) {
        (Value::Float(f), Scalar::Float) => out.extend(f.to_le_bytes()),
        (Value::Double(d), Scalar::Double) => out.extend(d.to_le_bytes()),
        (Value::Int(i), Scalar::Int) => out.extend(i.to_le_bytes()),
        (Value::Bool(b), Scalar::Bool) => out.extend(i32::from(*b).to_le_bytes()),
        (Value::Uint(u), Scalar::Uint) => out.extend(u.to_le_bytes()),
        (Value::Long(l), Scalar::Long) => out.extend(l.to_le_bytes()),
        (Value::Ulong(u), Scalar::Ulong) => out.extend(u.to_le_bytes()),
        (v, s) => {
            return Err(DataError::new(format!(
                "internal: value {v:?} does not match {}",
                s.name()
            )))
        }
    }
    Ok(())
}

/// Appends the bytes of `v` (of element type `t`, arrays flattened row-major).
pub fn encode(v: &Value, t: &Type, out: &mut Vec<u8>) -> Res<()> {
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
        (v, t) => Err(DataError::new(format!("internal: cannot encode {v:?} as {t}"))),
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
pub fn decode_dims(b: &[u8], dims: &[usize], elem: &Type) -> Value {
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
