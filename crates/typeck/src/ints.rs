//! Typing of the integer operators: bit operations (`bit-and` ... `rotl`), the conversions to
//! `uint`, `long` and `ulong`, and bit reinterpretation (`as-uint`, `as-float`, ...).
//!
//! Bit operations take integer scalars or vectors (`int`, `uint`, `long`, `ulong`), lane-wise
//! like arithmetic; the count of a shift or rotation may also be any integer scalar (`(shl x 3)`
//! on a `ulong` `x`), as in OpenCL C, where the result has the type of the shifted value.
//! A reinterpretation keeps the width: `as-uint` of a `float` (32 bits) is allowed, of a
//! `double` is not.

use ir::{Diagnostic, Op, Scalar, Span, Type};

/// The type of a bit operation, conversion or reinterpretation, or `None` for other operators.
/// `spans` are those of the operands, for errors about one of them.
pub(crate) fn op_type(op: Op, ts: &[Type], span: Span, spans: &[Span]) -> Option<Result<Type, Diagnostic>> {
    let name = op.name();
    let integer = |t: &Type| matches!(t, Type::Scalar(s) | Type::Vector(s, _) if s.is_integer());
    let not_integer = |i: usize| {
        let mut d = Diagnostic::new(
            spans.get(i).copied().unwrap_or(span),
            format!(
                "`{name}` needs an integer (int, uint, long or ulong), but this is {}",
                ts[i]
            ),
        );
        if matches!(ts[i].scalar(), Some(Scalar::Float | Scalar::Double)) {
            d = d.with_note(
                "bit operations work on integers; `as-uint` and `as-ulong` give the bits of a float or double",
            );
        }
        d
    };
    let convert = |to: Scalar| match ts[0] {
        Type::Scalar(_) => Ok(Type::Scalar(to)),
        ref t => Err(Diagnostic::new(span, format!("`{name}` converts scalars, not {t}"))),
    };
    Some(match op {
        Op::BitAnd | Op::BitOr | Op::BitXor => match (integer(&ts[0]), integer(&ts[1])) {
            (false, _) => Err(not_integer(0)),
            (_, false) => Err(not_integer(1)),
            (true, true) => lanewise(&ts[0], &ts[1]).ok_or_else(|| {
                Diagnostic::new(span, format!("`{name}` of {} and {}: the operands must have the same type", ts[0], ts[1]))
                    .with_note(SUFFIX_NOTE)
            }),
        },
        Op::BitNot if integer(&ts[0]) => Ok(ts[0].clone()),
        Op::BitNot => Err(not_integer(0)),
        Op::Shl | Op::Shr | Op::Rotl => match (integer(&ts[0]), integer(&ts[1])) {
            (false, _) => Err(not_integer(0)),
            (_, false) => Err(not_integer(1)),
            (true, true) => match (&ts[0], &ts[1]) {
                (_, Type::Scalar(_)) => Ok(ts[0].clone()),
                (a, b) if a == b => Ok(a.clone()),
                (a, b) => Err(Diagnostic::new(
                    spans.get(1).copied().unwrap_or(span),
                    format!("`{name}` of {a} by {b}: the count must be an integer scalar or a vector of the type of the value"),
                )),
            },
        },
        Op::ToUint => convert(Scalar::Uint),
        Op::ToLong => convert(Scalar::Long),
        Op::ToUlong => convert(Scalar::Ulong),
        Op::As(to) => match ts[0] {
            Type::Scalar(s) | Type::Vector(s, _) if s == Scalar::Bool || to == Scalar::Bool => {
                Err(Diagnostic::new(span, format!("`{name}` cannot reinterpret {}: bool has no bit layout", ts[0])))
            }
            Type::Scalar(s) | Type::Vector(s, _) if s.size_bytes() != to.size_bytes() => Err(Diagnostic::new(
                span,
                format!(
                    "`{name}` of {}: reinterpreting needs the same width, and {} has {} bits, {} has {}",
                    ts[0],
                    s.name(),
                    s.size_bytes() * 8,
                    to.name(),
                    to.size_bytes() * 8
                ),
            )
            .with_note(match to.size_bytes() {
                4 => "32-bit types are int, uint and float; convert the value first (to-int, to-float, ...) or use as-long, as-ulong or as-double",
                _ => "64-bit types are long, ulong and double; convert the value first (to-long, to-double, ...) or use as-int, as-uint or as-float",
            })),
            Type::Scalar(_) => Ok(Type::Scalar(to)),
            Type::Vector(_, w) => Ok(Type::Vector(to, w)),
            ref t => Err(Diagnostic::new(span, format!("`{name}` reinterprets scalars and vectors, not {t}"))),
        },
        Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Div
        | Op::Rem
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::And
        | Op::Or
        | Op::Not
        | Op::Neg
        | Op::Min
        | Op::Max
        | Op::Abs
        | Op::Sqrt
        | Op::Exp
        | Op::Log
        | Op::Sin
        | Op::Cos
        | Op::Pow
        | Op::Fma
        | Op::ToFloat
        | Op::ToInt
        | Op::ToDouble
        | Op::Dot
        | Op::Length
        | Op::MakeVec
        | Op::VGet(_)
        | Op::Tuple
        | Op::Get(_)
        | Op::At => return None,
    })
}

/// Lane-wise operands: equal types, or a vector and a scalar of its lane type.
pub(crate) fn lanewise(a: &Type, b: &Type) -> Option<Type> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (Type::Vector(s, _), Type::Scalar(t)) | (Type::Scalar(t), Type::Vector(s, _)) if s == t => {
            Some(if let Type::Vector(..) = a { a.clone() } else { b.clone() })
        }
        _ => None,
    }
}

/// How to make two integer operands agree.
pub(crate) const SUFFIX_NOTE: &str =
    "convert one side (to-int, to-uint, to-long, to-ulong, to-float, to-double) or write the literal with its type: 2 (int), 2u (uint), 2l (long), 2ul (ulong), 2.0f, 2.0d";
