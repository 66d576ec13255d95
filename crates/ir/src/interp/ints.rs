//! Integer semantics of the interpreter: `uint`, `long` and `ulong` arithmetic, the bit
//! operations on every integer type, conversions to and from the integer types, and bit
//! reinterpretation (`as-uint`, ...).
//!
//! Exactly OpenCL C's results, with the cases C leaves undefined fixed so that the compiled
//! kernels agree (code generation emits what makes them agree):
//! - all integer arithmetic wraps modulo 2^width, signed too (the kernels compute signed `+ - *`
//!   in the unsigned type of the same width, where C defines wrapping);
//! - `shl`, `shr`, `rotl` take the count modulo the width (OpenCL C's shift rule); `shr` is
//!   arithmetic on `int`/`long`, logical on `uint`/`ulong`;
//! - integer to integer conversion keeps the low bits (two's complement), as every OpenCL device
//!   does; floating to integer truncates toward zero and saturates, NaN giving 0 (the kernels
//!   use `convert_T_sat`, which OpenCL defines so);
//! - `/` and `%` by zero are errors, as for `int`.

use super::Value;
use crate::expr::Op;
use crate::types::Scalar;

/// Two's-complement bits of an integer value, with its kind; `None` for other values.
fn bits(v: &Value) -> Option<(u64, Scalar)> {
    Some(match v {
        Value::Int(i) => (*i as u32 as u64, Scalar::Int),
        Value::Uint(u) => (u64::from(*u), Scalar::Uint),
        Value::Long(l) => (*l as u64, Scalar::Long),
        Value::Ulong(u) => (*u, Scalar::Ulong),
        Value::Float(_)
        | Value::Double(_)
        | Value::Bool(_)
        | Value::Vector(_)
        | Value::Tuple(_)
        | Value::Array(_)
        | Value::Approx(_) => return None,
    })
}

/// The value of kind `s` (an integer kind) with these low bits.
fn of_bits(b: u64, s: Scalar) -> Value {
    match s {
        Scalar::Int => Value::Int(b as u32 as i32),
        Scalar::Uint => Value::Uint(b as u32),
        Scalar::Long => Value::Long(b as i64),
        Scalar::Ulong => Value::Ulong(b),
        Scalar::Float => Value::Float(f32::from_bits(b as u32)),
        Scalar::Double => Value::Double(f64::from_bits(b)),
        Scalar::Bool => Value::Bool(b != 0),
    }
}

/// Width in bits of an integer kind.
fn width(s: Scalar) -> u32 {
    match s {
        Scalar::Int | Scalar::Uint | Scalar::Float | Scalar::Bool => 32,
        Scalar::Long | Scalar::Ulong | Scalar::Double => 64,
    }
}

fn signed(s: Scalar) -> bool {
    match s {
        Scalar::Int | Scalar::Long => true,
        Scalar::Uint | Scalar::Ulong | Scalar::Float | Scalar::Double | Scalar::Bool => false,
    }
}

/// An integer's value, exactly.
fn wide(b: u64, s: Scalar) -> i128 {
    match (signed(s), width(s)) {
        (true, 32) => i128::from(b as u32 as i32),
        (true, _) => i128::from(b as i64),
        (false, 32) => i128::from(b as u32),
        (false, _) => i128::from(b),
    }
}

/// The target kind of a conversion operator.
fn conversion_target(op: Op) -> Option<Scalar> {
    match op {
        Op::ToInt => Some(Scalar::Int),
        Op::ToUint => Some(Scalar::Uint),
        Op::ToLong => Some(Scalar::Long),
        Op::ToUlong => Some(Scalar::Ulong),
        Op::ToFloat => Some(Scalar::Float),
        Op::ToDouble => Some(Scalar::Double),
        _ => None,
    }
}

/// A float converted to integer kind `s` as `convert_T_sat` does: toward zero, saturating,
/// NaN to 0 (Rust's `as` from a float does exactly this).
pub(super) fn from_float(x: f64, s: Scalar) -> Value {
    match s {
        Scalar::Int => Value::Int(x as i32),
        Scalar::Uint => Value::Uint(x as u32),
        Scalar::Long => Value::Long(x as i64),
        Scalar::Ulong => Value::Ulong(x as u64),
        Scalar::Float => Value::Float(x as f32),
        Scalar::Double => Value::Double(x),
        Scalar::Bool => Value::Bool(x != 0.0),
    }
}

/// `op` on scalar `args` when this module defines it: a conversion from or to `uint`, `long`
/// or `ulong`, a reinterpretation, a bit operation, or arithmetic on `uint`, `long`, `ulong`.
/// `None` leaves the operation to the caller (`int`, `float`, `double` and `bool` arithmetic);
/// `Some(Err(message))` is a failure of the program (division by zero, a bad operand).
pub(super) fn scalar(op: Op, args: &[Value]) -> Option<Result<Value, String>> {
    let new_kind = |v: &Value| matches!(v, Value::Uint(_) | Value::Long(_) | Value::Ulong(_));
    if let (Some(to), [x]) = (conversion_target(op), args) {
        if !(new_kind(x) || matches!(to, Scalar::Uint | Scalar::Long | Scalar::Ulong)) {
            return None;
        }
        return Some(convert(x, to));
    }
    match op {
        Op::As(to) => Some(match args {
            [x] => reinterpret(x, to),
            _ => Err(format!("`{}` takes one operand", op.name())),
        }),
        Op::BitAnd | Op::BitOr | Op::BitXor | Op::Shl | Op::Shr | Op::Rotl => Some(match args {
            [a, b] => bitwise(op, a, b),
            _ => Err(format!("`{}` takes two operands", op.name())),
        }),
        Op::BitNot => Some(match args {
            [a] => match bits(a) {
                Some((b, s)) => Ok(of_bits(!b, s)),
                None => Err(format!("`bit-not` needs an integer, not {}", super::describe(a))),
            },
            _ => Err("`bit-not` takes one operand".to_string()),
        }),
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem | Op::Min | Op::Max => match args {
            [a, b] if new_kind(a) || new_kind(b) => Some(arith(op, a, b)),
            _ => None,
        },
        Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => match args {
            [a, b] if new_kind(a) || new_kind(b) => Some(compare(op, a, b)),
            _ => None,
        },
        Op::Neg | Op::Abs => match args {
            [a] if new_kind(a) => {
                let (b, s) = bits(a)?;
                let v = wide(b, s);
                // the negation's low bits: wrapping, as all integer arithmetic here
                Some(Ok(of_bits(if op == Op::Neg || v < 0 { (-v) as u64 } else { b }, s)))
            }
            _ => None,
        },
        Op::ToFloat
        | Op::ToInt
        | Op::ToDouble
        | Op::ToUint
        | Op::ToLong
        | Op::ToUlong
        | Op::And
        | Op::Or
        | Op::Not
        | Op::Sqrt
        | Op::Exp
        | Op::Log
        | Op::Sin
        | Op::Cos
        | Op::Pow
        | Op::Fma
        | Op::Dot
        | Op::Length
        | Op::MakeVec
        | Op::VGet(_)
        | Op::Tuple
        | Op::Get(_)
        | Op::At => None,
    }
}

fn convert(x: &Value, to: Scalar) -> Result<Value, String> {
    if let Some((b, s)) = bits(x) {
        return Ok(match to {
            Scalar::Float => Value::Float(wide(b, s) as f32),
            Scalar::Double => Value::Double(wide(b, s) as f64),
            Scalar::Bool => Value::Bool(b != 0),
            // the value's two's complement, sign-extended, cut to the target's width
            Scalar::Int | Scalar::Uint | Scalar::Long | Scalar::Ulong => of_bits(wide(b, s) as u64, to),
        });
    }
    match x {
        Value::Float(f) => Ok(from_float(f64::from(*f), to)),
        Value::Double(d) => Ok(from_float(*d, to)),
        Value::Bool(b) => Ok(of_bits(u64::from(*b), to)),
        Value::Int(_)
        | Value::Uint(_)
        | Value::Long(_)
        | Value::Ulong(_)
        | Value::Vector(_)
        | Value::Tuple(_)
        | Value::Array(_)
        | Value::Approx(_) => Err(format!("`to-{}` of {}", to.name(), super::describe(x))),
    }
}

/// The bits of `x` as a value of kind `to` (the type checker made the widths equal).
fn reinterpret(x: &Value, to: Scalar) -> Result<Value, String> {
    let (b, w) = match x {
        Value::Float(f) => (u64::from(f.to_bits()), 32),
        Value::Double(d) => (d.to_bits(), 64),
        v => match bits(v) {
            Some((b, s)) => (b, width(s)),
            None => return Err(format!("`as-{}` of {}", to.name(), super::describe(v))),
        },
    };
    if w != width(to) || to == Scalar::Bool {
        return Err(format!(
            "`as-{}` of {} ({w} bits): the widths differ",
            to.name(),
            super::describe(x)
        ));
    }
    Ok(of_bits(b, to))
}

fn bitwise(op: Op, a: &Value, b: &Value) -> Result<Value, String> {
    let operands = || format!("`{}` of {} and {}", op.name(), super::describe(a), super::describe(b));
    let (Some((x, s)), Some((y, t))) = (bits(a), bits(b)) else {
        return Err(format!("{}: bit operations need integers", operands()));
    };
    let w = width(s);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let r = match op {
        Op::BitAnd | Op::BitOr | Op::BitXor if s != t => {
            return Err(format!("{}: the operands must have one type", operands()))
        }
        Op::BitAnd => x & y,
        Op::BitOr => x | y,
        Op::BitXor => x ^ y,
        // The count modulo the width, read as unsigned: OpenCL C's rule for `<<` and `>>`.
        Op::Shl => x << (y & u64::from(w - 1)),
        Op::Shr if signed(s) => (wide(x, s) >> (y & u64::from(w - 1))) as u64,
        Op::Shr => x >> (y & u64::from(w - 1)),
        Op::Rotl if w == 64 => x.rotate_left((y & 63) as u32),
        Op::Rotl => u64::from((x as u32).rotate_left((y & 31) as u32)),
        _ => return Err(format!("{}: not a bit operation", operands())),
    };
    Ok(of_bits(r & mask, s))
}

fn arith(op: Op, a: &Value, b: &Value) -> Result<Value, String> {
    let (Some((x, s)), Some((y, t))) = (bits(a), bits(b)) else {
        return Err(format!(
            "`{}` cannot be applied to {} and {}",
            op.name(),
            super::describe(a),
            super::describe(b)
        ));
    };
    if s != t {
        return Err(format!("`{}` of a {} and a {}", op.name(), s.name(), t.name()));
    }
    let (vx, vy) = (wide(x, s), wide(y, s));
    let r: i128 = match op {
        Op::Add => vx + vy,
        Op::Sub => vx - vy,
        // the low 64 bits of the product are those of the product of the low 64 bits
        Op::Mul => (x.wrapping_mul(y)) as i128,
        Op::Div | Op::Rem if vy == 0 => {
            return Err(format!(
                "integer {} by zero",
                if op == Op::Div { "division" } else { "remainder" }
            ))
        }
        // truncating toward zero; i128 holds LONG_MIN / -1, which then wraps as for `int`
        Op::Div => vx / vy,
        Op::Rem => vx % vy,
        Op::Min => vx.min(vy),
        Op::Max => vx.max(vy),
        _ => return Err(format!("`{}` is no arithmetic operator", op.name())),
    };
    Ok(of_bits(r as u64, s))
}

fn compare(op: Op, a: &Value, b: &Value) -> Result<Value, String> {
    match (bits(a), bits(b)) {
        (Some((x, s)), Some((y, t))) if s == t => {
            let o = wide(x, s).cmp(&wide(y, s));
            super::compare(op, o)
                .map(Value::Bool)
                .ok_or_else(|| format!("`{}` is no comparison", op.name()))
        }
        _ => Err(format!(
            "`{}` cannot compare {} and {}",
            op.name(),
            super::describe(a),
            super::describe(b)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(op: Op, args: &[Value]) -> Value {
        match scalar(op, args) {
            Some(Ok(v)) => v,
            other => panic!("{} of {args:?}: {other:?}", op.name()),
        }
    }

    #[test]
    fn unsigned_and_signed_arithmetic_wraps() {
        assert_eq!(ok(Op::Add, &[Value::Uint(u32::MAX), Value::Uint(2)]), Value::Uint(1));
        assert_eq!(ok(Op::Sub, &[Value::Uint(0), Value::Uint(1)]), Value::Uint(u32::MAX));
        assert_eq!(
            ok(Op::Mul, &[Value::Ulong(u64::MAX), Value::Ulong(u64::MAX)]),
            Value::Ulong(1)
        );
        assert_eq!(
            ok(Op::Add, &[Value::Long(i64::MAX), Value::Long(1)]),
            Value::Long(i64::MIN)
        );
        assert_eq!(ok(Op::Neg, &[Value::Long(i64::MIN)]), Value::Long(i64::MIN));
        assert_eq!(ok(Op::Abs, &[Value::Long(-5)]), Value::Long(5));
        assert_eq!(ok(Op::Neg, &[Value::Uint(1)]), Value::Uint(u32::MAX));
        assert_eq!(
            ok(Op::Div, &[Value::Long(i64::MIN), Value::Long(-1)]),
            Value::Long(i64::MIN)
        );
        assert_eq!(ok(Op::Rem, &[Value::Long(-7), Value::Long(2)]), Value::Long(-1));
        assert_eq!(
            scalar(Op::Div, &[Value::Ulong(1), Value::Ulong(0)]),
            Some(Err("integer division by zero".to_string()))
        );
        // `int` arithmetic is the caller's
        assert_eq!(scalar(Op::Add, &[Value::Int(1), Value::Int(2)]), None);
    }

    #[test]
    fn shift_counts_are_taken_modulo_the_width() {
        assert_eq!(ok(Op::Shl, &[Value::Uint(1), Value::Int(33)]), Value::Uint(2));
        assert_eq!(ok(Op::Shl, &[Value::Int(1), Value::Int(-1)]), Value::Int(i32::MIN));
        assert_eq!(ok(Op::Shl, &[Value::Ulong(1), Value::Uint(64)]), Value::Ulong(1));
        assert_eq!(ok(Op::Shr, &[Value::Int(-16), Value::Int(2)]), Value::Int(-4));
        assert_eq!(
            ok(Op::Shr, &[Value::Uint(0xffff_fff0), Value::Int(2)]),
            Value::Uint(0x3fff_fffc)
        );
        assert_eq!(ok(Op::Shr, &[Value::Long(-1), Value::Int(63)]), Value::Long(-1));
        assert_eq!(ok(Op::Rotl, &[Value::Uint(0x8000_0001), Value::Int(1)]), Value::Uint(3));
        assert_eq!(ok(Op::Rotl, &[Value::Int(-1), Value::Int(5)]), Value::Int(-1));
        assert_eq!(
            ok(Op::Rotl, &[Value::Ulong(1 << 63), Value::Ulong(65)]),
            Value::Ulong(1)
        );
        assert_eq!(ok(Op::BitNot, &[Value::Long(0)]), Value::Long(-1));
        assert_eq!(ok(Op::BitXor, &[Value::Int(-1), Value::Int(5)]), Value::Int(-6));
    }

    #[test]
    fn conversions_keep_low_bits_and_saturate_floats() {
        assert_eq!(ok(Op::ToLong, &[Value::Int(-1)]), Value::Long(-1));
        assert_eq!(ok(Op::ToUlong, &[Value::Int(-1)]), Value::Ulong(u64::MAX));
        assert_eq!(ok(Op::ToUint, &[Value::Long(-1)]), Value::Uint(u32::MAX));
        assert_eq!(ok(Op::ToInt, &[Value::Uint(u32::MAX)]), Value::Int(-1));
        assert_eq!(ok(Op::ToUint, &[Value::Float(-2.5)]), Value::Uint(0));
        assert_eq!(ok(Op::ToUint, &[Value::Float(f32::NAN)]), Value::Uint(0));
        assert_eq!(ok(Op::ToLong, &[Value::Double(1e300)]), Value::Long(i64::MAX));
        assert_eq!(ok(Op::ToFloat, &[Value::Uint(16_777_217)]), Value::Float(16_777_216.0));
        assert_eq!(
            ok(Op::ToDouble, &[Value::Ulong(u64::MAX)]),
            Value::Double(18_446_744_073_709_551_616.0)
        );
        assert_eq!(ok(Op::ToUint, &[Value::Bool(true)]), Value::Uint(1));
        // conversions among int, float, double and bool are the caller's
        assert_eq!(scalar(Op::ToInt, &[Value::Float(1.5)]), None);
    }

    #[test]
    fn reinterpretation_keeps_the_bits_of_one_width() {
        assert_eq!(ok(Op::As(Scalar::Uint), &[Value::Float(1.0)]), Value::Uint(0x3f80_0000));
        assert_eq!(
            ok(Op::As(Scalar::Float), &[Value::Uint(0x4049_0fdb)]),
            Value::Float(std::f32::consts::PI)
        );
        assert_eq!(ok(Op::As(Scalar::Int), &[Value::Float(-0.0)]), Value::Int(i32::MIN));
        assert_eq!(
            ok(Op::As(Scalar::Ulong), &[Value::Double(1.0)]),
            Value::Ulong(0x3ff0_0000_0000_0000)
        );
        assert_eq!(ok(Op::As(Scalar::Long), &[Value::Ulong(u64::MAX)]), Value::Long(-1));
        assert_eq!(
            scalar(Op::As(Scalar::Uint), &[Value::Double(1.0)]),
            Some(Err("`as-uint` of a double (64 bits): the widths differ".to_string()))
        );
    }
}
