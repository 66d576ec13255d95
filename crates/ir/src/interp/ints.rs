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

use super::{ErrorKind, Res, Value, B};
use crate::expr::{ExprId, Op};
use crate::types::Scalar;

impl super::Interp<'_> {
    /// A conversion of a float to integer kind `to` (`bits`: a reinterpretation as `to`) under
    /// [`super::Arith::Bounded`]: the exact value's result when every value within the bound
    /// gives the same one, else an `Unbounded` failure (rounding could change the integer or
    /// the bits). `None` when `x` is no float.
    pub(super) fn bounded_int(&self, id: ExprId, op: Op, to: Scalar, bits: bool, x: &Value) -> Option<Res<Value>> {
        let a = B::of(x)?;
        let (lo, hi) = (a.v - a.spread(), a.v + a.spread());
        // the bits of a computed float are only known when it is exact
        let changes = bits || a.v.is_nan() || from_float(lo, to) != from_float(hi, to);
        if !a.is_exact() && changes {
            return Some(self.fail(
                id,
                ErrorKind::Unbounded,
                format!(
                    "`{}` of {} ± {:.3e}: rounding can change the {}",
                    op.name(),
                    a.v,
                    a.spread(),
                    if bits { "bits" } else { "integer" }
                ),
            ));
        }
        if !bits {
            return Some(Ok(from_float(a.v, to)));
        }
        let exact = if a.double {
            Value::Double(a.v)
        } else {
            Value::Float(a.v as f32)
        };
        Some(reinterpret(&exact, to).or_else(|m| self.err(id, m)))
    }
}

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

/// The value of kind `s` with these low bits (of a float type: these bits as a float).
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

/// Width in bits of a scalar kind in memory.
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
    let wide_args = args
        .iter()
        .any(|v| matches!(v, Value::Uint(_) | Value::Long(_) | Value::Ulong(_)));
    // a conversion is this module's when it involves a new kind
    let conversion = |to: Scalar| match args {
        [x] if wide_args || matches!(to, Scalar::Uint | Scalar::Long | Scalar::Ulong) => Some(convert(x, to)),
        [_] => None,
        _ => Some(Err(format!("`{}` takes one operand", op.name()))),
    };
    let bitwise = |same_type: bool, f: &dyn Fn(u64, u64, Scalar) -> u64| match args {
        [a, b] => Some(bitwise(op, a, b, same_type, f)),
        _ => Some(Err(format!("`{}` takes two operands", op.name()))),
    };
    // arithmetic and comparisons of `int`, `float` and `double` are the caller's
    let arith = |f: &dyn Fn(i128, i128) -> Result<i128, String>| match args {
        [a, b] if wide_args => Some(arith(op, a, b, f)),
        _ => None,
    };
    let compare = || match args {
        [a, b] if wide_args => Some(compare(op, a, b)),
        _ => None,
    };
    // the negation's low bits: wrapping, as all integer arithmetic here
    let unary = |f: &dyn Fn(i128) -> i128| match args {
        [a] if wide_args => bits(a).map(|(b, s)| Ok(of_bits(f(wide(b, s)) as u64, s))),
        _ => None,
    };
    match op {
        Op::ToInt => conversion(Scalar::Int),
        Op::ToUint => conversion(Scalar::Uint),
        Op::ToLong => conversion(Scalar::Long),
        Op::ToUlong => conversion(Scalar::Ulong),
        Op::ToFloat => conversion(Scalar::Float),
        Op::ToDouble => conversion(Scalar::Double),
        Op::As(to) => Some(match args {
            [x] => reinterpret(x, to),
            _ => Err(format!("`{}` takes one operand", op.name())),
        }),
        Op::BitAnd => bitwise(true, &|x, y, _| x & y),
        Op::BitOr => bitwise(true, &|x, y, _| x | y),
        Op::BitXor => bitwise(true, &|x, y, _| x ^ y),
        // The count modulo the width, read as unsigned: OpenCL C's rule for `<<` and `>>`.
        Op::Shl => bitwise(false, &|x, y, s| x << (y % u64::from(width(s)))),
        Op::Shr => bitwise(false, &|x, y, s| {
            let n = y % u64::from(width(s));
            if signed(s) {
                (wide(x, s) >> n) as u64
            } else {
                x >> n
            }
        }),
        Op::Rotl => bitwise(false, &|x, y, s| {
            if width(s) == 64 {
                x.rotate_left((y % 64) as u32)
            } else {
                u64::from((x as u32).rotate_left((y % 32) as u32))
            }
        }),
        Op::BitNot => Some(match args {
            [a] => match bits(a) {
                Some((b, s)) => Ok(of_bits(!b, s)),
                None => Err(format!("`bit-not` needs an integer, not {}", super::describe(a))),
            },
            _ => Err("`bit-not` takes one operand".to_string()),
        }),
        Op::Add => arith(&|x, y| Ok(x + y)),
        Op::Sub => arith(&|x, y| Ok(x - y)),
        // the low 64 bits of the product are those of the product of the low 64 bits
        Op::Mul => arith(&|x, y| Ok(i128::from((x as u64).wrapping_mul(y as u64)))),
        // truncating toward zero; i128 holds LONG_MIN / -1, which then wraps as for `int`
        Op::Div => arith(&|x, y| nonzero(y, "division").map(|y| x / y)),
        Op::Rem => arith(&|x, y| nonzero(y, "remainder").map(|y| x % y)),
        Op::Min => arith(&|x, y| Ok(x.min(y))),
        Op::Max => arith(&|x, y| Ok(x.max(y))),
        Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => compare(),
        Op::Neg => unary(&|v| -v),
        Op::Abs => unary(&i128::abs),
        Op::And
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

fn nonzero(y: i128, what: &str) -> Result<i128, String> {
    if y == 0 {
        Err(format!("integer {what} by zero"))
    } else {
        Ok(y)
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

/// A bit operation `f` on the bits of `a` and `b` (and `a`'s kind), cut to `a`'s width; the
/// operands must have one kind when `same_type` (a shift count need not).
fn bitwise(
    op: Op,
    a: &Value,
    b: &Value,
    same_type: bool,
    f: &dyn Fn(u64, u64, Scalar) -> u64,
) -> Result<Value, String> {
    let operands = || format!("`{}` of {} and {}", op.name(), super::describe(a), super::describe(b));
    let (Some((x, s)), Some((y, t))) = (bits(a), bits(b)) else {
        return Err(format!("{}: bit operations need integers", operands()));
    };
    if same_type && s != t {
        return Err(format!("{}: the operands must have one type", operands()));
    }
    let w = width(s);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    Ok(of_bits(f(x, y, s) & mask, s))
}

/// Arithmetic `f` on the exact values of two integers of one kind, wrapped to that kind.
fn arith(op: Op, a: &Value, b: &Value, f: &dyn Fn(i128, i128) -> Result<i128, String>) -> Result<Value, String> {
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
    Ok(of_bits(f(wide(x, s), wide(y, s))? as u64, s))
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
