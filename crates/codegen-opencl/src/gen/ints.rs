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
            Op::BitAnd => self.bin_of(BinOp::BitAnd, two(&mut a)?),
            Op::BitOr => self.bin_of(BinOp::BitOr, two(&mut a)?),
            Op::BitXor => self.bin_of(BinOp::BitXor, two(&mut a)?),
            Op::BitNot => CExpr::un(UnOp::BitNot, one(&mut a)?),
            Op::Shl => {
                let (x, n) = two(&mut a)?;
                let n = self.count(e, ts, n)?;
                // a signed value shifted into or past the sign bit: computed unsigned
                self.wrapping(&ts[0], vec![(x, ts[0].clone())], |u| {
                    CExpr::bin(BinOp::Shl, u[0].clone(), n)
                })?
            }
            Op::Shr => {
                let (x, n) = two(&mut a)?;
                CExpr::bin(BinOp::Shr, x, self.count(e, ts, n)?)
            }
            Op::Rotl => {
                let (x, n) = two(&mut a)?;
                let n = self.count(e, ts, n)?;
                // `rotate` takes the count as a vector of the value's type
                if ts[1] != ts[0] && matches!(ts[0], Type::Vector(..)) {
                    CExpr::call("rotate", vec![x, CExpr::VecLit(crt, vec![n])])
                } else {
                    CExpr::call("rotate", vec![x, n])
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
            Op::As(_) => {
                let x = one(&mut a)?;
                // A float's bits read as a signed integer pass through the unsigned type of its
                // width: a wrapping operation takes `as_long(y)` back as its unsigned `y`
                // (`unsigned_operand`), which must then be integer bits, not the float.
                let x = match self.unsigned_names(rt)? {
                    Some((_, to_u)) if ts[0].scalar().is_some_and(Scalar::is_floating) => CExpr::call(to_u, vec![x]),
                    Some(_) | None => x,
                };
                CExpr::call(format!("as_{}", print::ctype(&crt)), vec![x])
            }
            Op::Add => self.wrapping_bin(rt, ts, BinOp::Add, two(&mut a)?)?,
            Op::Sub => self.wrapping_bin(rt, ts, BinOp::Sub, two(&mut a)?)?,
            Op::Mul => self.wrapping_bin(rt, ts, BinOp::Mul, two(&mut a)?)?,
            Op::Neg => {
                let x = one(&mut a)?;
                self.wrapping(rt, vec![(x, ts[0].clone())], |u| CExpr::un(UnOp::Neg, u[0].clone()))?
            }
            // A signed scalar divided by -1 is its negation (remainder 0): the minimum divided
            // by -1 overflows, which traps on some devices, and wraps in the interpreter.
            Op::Div => self.signed_division(BinOp::Div, ts, rt, &crt, two(&mut a)?)?,
            Op::Rem => self.signed_division(BinOp::Rem, ts, rt, &crt, two(&mut a)?)?,
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

    /// The divisor `y` (of type `t`) of an integer `/` or `%` in expression `e`, made safe: a
    /// zero divisor sets the error flag (unless an enclosing `if` branch is not taken), as the
    /// interpreter fails on it, and the division is by 1 instead (by zero it is undefined, and
    /// traps on some devices). A constant other than 0 is used as it is.
    pub(super) fn checked_divisor(&mut self, e: ExprId, y: CExpr, t: &Type) -> Result<CExpr> {
        let nonzero_constant = match y {
            CExpr::Int(c) => c != 0,
            CExpr::TypedInt(_, b) => b != 0,
            CExpr::Var(_)
            | CExpr::Float(_)
            | CExpr::Double(_)
            | CExpr::Index(..)
            | CExpr::Field(..)
            | CExpr::Unary(..)
            | CExpr::Binary(..)
            | CExpr::Call(..)
            | CExpr::Cast(..)
            | CExpr::Select(..)
            | CExpr::VecLit(..)
            | CExpr::Sym(_) => false,
        };
        if nonzero_constant {
            return Ok(y);
        }
        let y = self.shareable(y, t)?;
        let site = self.checks.len() + 1;
        self.division_checks.push(self.checks.len());
        self.checks.push(self.prog.span(e));
        let zero = CExpr::bin(BinOp::Eq, y.clone(), CExpr::Int(0));
        let fails = self
            .guards
            .iter()
            .rev()
            .fold(zero.clone(), |o, g| CExpr::bin(BinOp::And, g.clone(), o));
        self.open_if(fails);
        let flag = CExpr::var(&self.error_flag);
        self.push(Stmt::Call(CExpr::call(
            "atomic_max",
            vec![flag, CExpr::Int(site as i64)],
        )));
        self.close();
        Ok(CExpr::select(zero, CExpr::Int(1), y))
    }

    fn bin_of(&self, o: BinOp, (x, y): (CExpr, CExpr)) -> CExpr {
        CExpr::bin(o, x, y)
    }

    fn wrapping_bin(&mut self, t: &Type, ts: &[Type], o: BinOp, (x, y): (CExpr, CExpr)) -> Result<CExpr> {
        self.wrapping(t, vec![(x, ts[0].clone()), (y, ts[1].clone())], |u| {
            CExpr::bin(o, u[0].clone(), u[1].clone())
        })
    }

    /// A shift or rotate count `n` in the type of the shifted value (`ts[0]`): as it is when it
    /// has that type or the value's lane type; a literal written in that type (`13u`, not
    /// `(uint)13`); else cast.
    fn count(&mut self, e: ExprId, ts: &[Type], n: CExpr) -> Result<CExpr> {
        let lane = Type::Scalar(
            ts[0]
                .scalar()
                .ok_or_else(|| self.err(e, "internal: shift of a non-scalar"))?,
        );
        if ts[1] == ts[0] || ts[1] == lane {
            return Ok(n);
        }
        let t = self.ctype(&lane)?;
        Ok(match (&n, &t) {
            (CExpr::Int(i), CType::Scalar(s)) if *i >= 0 => CExpr::TypedInt(*s, *i as u64),
            _ => CExpr::cast(t, n),
        })
    }

    /// `x / y` or `x % y` of signed scalars, with `y == -1` giving `-x` (wrapping) or 0; a
    /// constant divisor other than -1 needs no test.
    fn signed_division(
        &mut self,
        o: BinOp,
        ts: &[Type],
        rt: &Type,
        crt: &CType,
        (x, y): (CExpr, CExpr),
    ) -> Result<CExpr> {
        let constant = if let CExpr::Int(c) = y {
            Some(c)
        } else if let CExpr::TypedInt(ast::Scalar::Long, b) = y {
            Some(b as i64)
        } else {
            None
        };
        if constant.is_some_and(|c| c != -1) {
            return Ok(CExpr::bin(o, x, y));
        }
        let (x, y) = (self.shareable(x, &ts[0])?, self.shareable(y, &ts[1])?);
        let minus_one = if *crt == CType::Scalar(ast::Scalar::Long) {
            CExpr::TypedInt(ast::Scalar::Long, u64::MAX)
        } else {
            CExpr::Int(-1)
        };
        let by_minus_one = CExpr::bin(BinOp::Eq, y.clone(), minus_one);
        let special = if o == BinOp::Div {
            self.wrapping(rt, vec![(x.clone(), ts[0].clone())], |u| {
                CExpr::un(UnOp::Neg, u[0].clone())
            })?
        } else {
            CExpr::Int(0)
        };
        Ok(CExpr::select(by_minus_one, special, CExpr::bin(o, x, y)))
    }

    /// `build` of `operands` (each with its type) computed in the unsigned type of `t`'s width
    /// when `t` is signed (`int`, `long` or vectors of them), its bits read back as `t`: `build`
    /// gets each operand converted to the unsigned type of its own type (a scalar beside a
    /// vector stays a scalar).
    fn wrapping(
        &mut self,
        t: &Type,
        operands: Vec<(CExpr, Type)>,
        build: impl FnOnce(&[CExpr]) -> CExpr,
    ) -> Result<CExpr> {
        let Some((signed, _)) = self.unsigned_names(t)? else {
            let xs: Vec<CExpr> = operands.into_iter().map(|(x, _)| x).collect();
            return Ok(build(&xs));
        };
        let mut xs = Vec::with_capacity(operands.len());
        for (x, xt) in operands {
            xs.push(match self.unsigned_names(&xt)? {
                Some((to_s, to_u)) => unsigned_operand(x, xt.scalar() == Some(Scalar::Int), &to_s, &to_u),
                None => x,
            });
        }
        Ok(CExpr::call(signed, vec![build(&xs)]))
    }

    /// `as_int4` and `as_uint4` for `int4` (the conversions from and to the unsigned type of
    /// the same width); `None` for a type that is not signed.
    fn unsigned_names(&mut self, t: &Type) -> Result<Option<(String, String)>> {
        let unsigned = match t.scalar() {
            Some(Scalar::Int) => Scalar::Uint,
            Some(Scalar::Long) => Scalar::Ulong,
            Some(Scalar::Uint | Scalar::Ulong | Scalar::Float | Scalar::Double | Scalar::Bool) | None => {
                return Ok(None)
            }
        };
        let ut = match t {
            Type::Vector(_, w) => Type::Vector(unsigned, *w),
            Type::Scalar(_) | Type::Tuple(_) | Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                Type::Scalar(unsigned)
            }
        };
        let (st, ut) = (print::ctype(&self.ctype(t)?), print::ctype(&self.ctype(&ut)?));
        Ok(Some((format!("as_{st}"), format!("as_{ut}"))))
    }
}

/// Operand `x` of a wrapping operation in the unsigned type: the bits of another wrapping
/// operation (`as_int(y)`, `to_s`) as they are (`y`); a non-negative literal written in the
/// unsigned type (`1u`, `1UL`); else converted (`to_u`).
fn unsigned_operand(x: CExpr, uint: bool, to_s: &str, to_u: &str) -> CExpr {
    if let CExpr::Call(g, xs) = &x {
        if g == to_s && xs.len() == 1 {
            return xs[0].clone();
        }
    }
    if let CExpr::Int(i) = x {
        if uint && i >= 0 {
            return CExpr::TypedInt(ast::Scalar::UInt, i as u64);
        }
    }
    if let CExpr::TypedInt(ast::Scalar::Long, b) = x {
        if b as i64 >= 0 {
            return CExpr::TypedInt(ast::Scalar::ULong, b);
        }
    }
    CExpr::call(to_u.to_string(), vec![x])
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
