//! Integer operators in OpenCL C: literals of `uint`, `long`, `ulong`; the bit operations;
//! conversions to the integer types; bit reinterpretation; and signed arithmetic that wraps.
//!
//! The interpreter (`ir::interp`, module `ints`) fixes what C leaves undefined, and the C here
//! is chosen to mean exactly that on every device:
//! - signed `+ - *`, negation and `shl` are computed in the unsigned type of the same width and the
//!   bits read back (`as_int(as_uint(a) + as_uint(b))`): unsigned arithmetic wraps in C, signed
//!   overflow is undefined, and compilers do exploit it;
//! - a signed scalar divided by -1 is negated instead (remainder 0): `INT_MIN / -1` traps on
//!   x86 and wraps in the interpreter;
//! - a shift count is reduced modulo the width by OpenCL C itself; a count of another integer
//!   type is cast to the shifted type (`rotate` takes one type, and a vector shifted by a scalar
//!   of another type is not C);
//! - a float converted to an integer type goes through `convert_T_sat` (`to-int` in
//!   `scalar`), which saturates and maps NaN to 0, as the interpreter does (a cast is undefined
//!   out of range).

use super::*;
use ir::Scalar;

impl Gen<'_> {
    /// The C of integer operator `op` (see [`is_int_op`]) on operands `a` of types `ts`, with
    /// result type `rt`.
    pub(super) fn int_op(&mut self, e: ExprId, op: Op, ts: &[Type], rt: &Type, mut a: Vec<CExpr>) -> Result<CExpr> {
        let crt = self.ctype(rt)?;
        let two = |a: &mut Vec<CExpr>| -> Result<(CExpr, CExpr)> {
            match (a.pop(), a.pop()) {
                (Some(y), Some(x)) => Ok((x, y)),
                _ => Err(self.err(e, format!("internal: `{}` needs two operands", op.name()))),
            }
        };
        let one = |a: &mut Vec<CExpr>| -> Result<CExpr> {
            a.pop()
                .ok_or_else(|| self.err(e, format!("internal: `{}` needs an operand", op.name())))
        };
        Ok(match op {
            Op::BitAnd | Op::BitOr | Op::BitXor => {
                let (x, y) = two(&mut a)?;
                let o = match op {
                    Op::BitAnd => BinOp::BitAnd,
                    Op::BitOr => BinOp::BitOr,
                    _ => BinOp::BitXor,
                };
                CExpr::bin(o, x, y)
            }
            Op::BitNot => CExpr::un(UnOp::BitNot, one(&mut a)?),
            Op::Shl | Op::Shr | Op::Rotl => {
                let (x, n) = two(&mut a)?;
                let lane = Type::Scalar(
                    ts[0]
                        .scalar()
                        .ok_or_else(|| self.err(e, "internal: shift of a non-scalar"))?,
                );
                let n = match (n, self.ctype(&lane)?) {
                    (n, _) if ts[1] == ts[0] || ts[1] == lane => n,
                    // a literal count is written in the value's type: `13u`, not `(uint)13`
                    (CExpr::Int(i), CType::Scalar(s)) if i >= 0 => CExpr::TypedInt(s, i as u64),
                    (n, t) => CExpr::cast(t, n),
                };
                match op {
                    // a signed value shifted into or past the sign bit: computed unsigned
                    Op::Shl => self.wrapping(&ts[0], |u| CExpr::bin(BinOp::Shl, u(x), n))?,
                    Op::Shr => CExpr::bin(BinOp::Shr, x, n),
                    // `rotate` takes the count as a vector of the value's type
                    _ if ts[1] != ts[0] && matches!(ts[0], Type::Vector(..)) => {
                        CExpr::call("rotate", vec![x, CExpr::VecLit(crt, vec![n])])
                    }
                    _ => CExpr::call("rotate", vec![x, n]),
                }
            }
            Op::ToUint | Op::ToLong | Op::ToUlong => {
                let x = one(&mut a)?;
                if ts[0].scalar().is_some_and(Scalar::is_floating) {
                    CExpr::call(format!("convert_{}_sat", print::ctype(&crt)), vec![x])
                } else {
                    CExpr::cast(crt, x)
                }
            }
            Op::As(_) => CExpr::call(format!("as_{}", print::ctype(&crt)), vec![one(&mut a)?]),
            Op::Add | Op::Sub | Op::Mul => {
                let (x, y) = two(&mut a)?;
                let o = match op {
                    Op::Add => BinOp::Add,
                    Op::Sub => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                self.wrapping(rt, |u| CExpr::bin(o, u(x), u(y)))?
            }
            Op::Neg => {
                let x = one(&mut a)?;
                self.wrapping(rt, |u| CExpr::un(UnOp::Neg, u(x)))?
            }
            // A signed scalar divided by -1 is its negation (remainder 0): the minimum divided
            // by -1 overflows, which traps on some devices, and wraps in the interpreter.
            Op::Div | Op::Rem => {
                let (x, y) = two(&mut a)?;
                let constant = match y {
                    CExpr::Int(c) => Some(c),
                    CExpr::TypedInt(ast::Scalar::Long, b) => Some(b as i64),
                    _ => None,
                };
                if constant.is_some_and(|c| c != -1) {
                    let o = if op == Op::Div { BinOp::Div } else { BinOp::Rem };
                    return Ok(CExpr::bin(o, x, y));
                }
                let (x, y) = (self.shareable(x, &ts[0])?, self.shareable(y, &ts[1])?);
                let minus_one = match crt {
                    CType::Scalar(ast::Scalar::Long) => CExpr::TypedInt(ast::Scalar::Long, u64::MAX),
                    _ => CExpr::Int(-1),
                };
                let by_minus_one = CExpr::bin(BinOp::Eq, y.clone(), minus_one);
                if op == Op::Div {
                    let neg = self.wrapping(rt, |u| CExpr::un(UnOp::Neg, u(x.clone())))?;
                    CExpr::select(by_minus_one, neg, CExpr::bin(BinOp::Div, x, y))
                } else {
                    CExpr::select(by_minus_one, CExpr::Int(0), CExpr::bin(BinOp::Rem, x, y))
                }
            }
            Op::Lt
            | Op::Le
            | Op::Gt
            | Op::Ge
            | Op::Eq
            | Op::Ne
            | Op::And
            | Op::Or
            | Op::Not
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
            | Op::At => return Err(self.err(e, format!("internal: `{}` is no integer operator", op.name()))),
        })
    }

    /// `f` computed in the unsigned type of `t`'s width when `t` is signed (`int`, `long` or
    /// vectors of them), its bits read back as `t`: `f` gets the conversion of each operand.
    fn wrapping(&mut self, t: &Type, f: impl FnOnce(&dyn Fn(CExpr) -> CExpr) -> CExpr) -> Result<CExpr> {
        let unsigned = match t.scalar() {
            Some(Scalar::Int) => Scalar::Uint,
            Some(Scalar::Long) => Scalar::Ulong,
            Some(Scalar::Uint | Scalar::Ulong | Scalar::Float | Scalar::Double | Scalar::Bool) | None => {
                return Ok(f(&|x| x));
            }
        };
        let ut = match t {
            Type::Vector(_, w) => Type::Vector(unsigned, *w),
            Type::Scalar(_) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                Type::Scalar(unsigned)
            }
        };
        let (st, ut) = (print::ctype(&self.ctype(t)?), print::ctype(&self.ctype(&ut)?));
        let (to_u, to_s) = (format!("as_{ut}"), format!("as_{st}"));
        Ok(CExpr::call(
            to_s.clone(),
            vec![f(&|x| match x {
                // the bits of another wrapping operation are used as they are
                CExpr::Call(g, mut xs) if *g == to_s && xs.len() == 1 => xs.remove(0),
                // a literal operand needs no conversion: it is written in the unsigned type
                CExpr::Int(i) if unsigned == Scalar::Uint && i >= 0 => CExpr::TypedInt(ast::Scalar::UInt, i as u64),
                CExpr::TypedInt(ast::Scalar::Long, b) if b as i64 >= 0 => CExpr::TypedInt(ast::Scalar::ULong, b),
                x => CExpr::call(to_u.clone(), vec![x]),
            })],
        ))
    }
}

/// Whether `op` is generated by [`Gen::int_op`] for a first operand of type `t` and a result of
/// type `result`: the bit operations,
/// conversions to `uint`/`long`/`ulong`, reinterpretations, and arithmetic that may overflow a
/// signed type.
pub(super) fn is_int_op(op: Op, t: &Type, result: &Type) -> bool {
    let signed = matches!(t.scalar(), Some(Scalar::Int | Scalar::Long));
    match op {
        Op::BitAnd
        | Op::BitOr
        | Op::BitXor
        | Op::BitNot
        | Op::Shl
        | Op::Shr
        | Op::Rotl
        | Op::ToUint
        | Op::ToLong
        | Op::ToUlong
        | Op::As(_) => true,
        Op::Add | Op::Sub | Op::Mul | Op::Neg => signed,
        // (a vector's `?:` would evaluate both sides)
        Op::Div | Op::Rem => signed && matches!(result, Type::Scalar(_)),
        Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Eq
        | Op::Ne
        | Op::And
        | Op::Or
        | Op::Not
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
        | Op::At => false,
    }
}

/// The C literal of an integer literal of the IR.
pub(super) fn literal(l: &ir::Lit) -> Option<CExpr> {
    Some(match l {
        ir::Lit::Uint(u) => CExpr::TypedInt(ast::Scalar::UInt, u64::from(*u)),
        ir::Lit::Long(v) => CExpr::TypedInt(ast::Scalar::Long, *v as u64),
        ir::Lit::Ulong(u) => CExpr::TypedInt(ast::Scalar::ULong, *u),
        ir::Lit::Int(_) | ir::Lit::Float(_) | ir::Lit::Double(_) | ir::Lit::Bool(_) => return None,
    })
}
