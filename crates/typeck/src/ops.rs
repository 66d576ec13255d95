//! The types of scalar operators and conversions, applied lane-wise to vectors (the integer types' rules are in `ints`).

use super::*;

impl Checker<'_> {
    pub(super) fn op(&mut self, e: ExprId, op: Op, args: &[ExprId], ts: &[Type]) -> Result<Type> {
        let span = self.span(e);
        let name = op.name();
        let err = |msg: String| Diagnostic::new(span, msg);
        let numeric = |t: &Type| t.scalar().is_some_and(Scalar::is_numeric);
        let floating = |t: &Type| matches!(t.scalar(), Some(Scalar::Float | Scalar::Double));
        let lanewise = ints::lanewise;
        let spans: Vec<Span> = args.iter().map(|a| self.span(*a)).collect();
        if let Some(t) = ints::op_type(op, ts, span, &spans) {
            return t;
        }
        let mismatch = |a: &Type, b: &Type| {
            let mut d = err(format!("`{name}` of {a} and {b}: the operands must have the same type"));
            if a.scalar().is_some() && b.scalar().is_some() {
                d = d.with_note(ints::SUFFIX_NOTE);
            }
            d
        };
        Ok(match op {
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Min | Op::Max | Op::Rem => {
                let t = lanewise(&ts[0], &ts[1]).ok_or_else(|| mismatch(&ts[0], &ts[1]))?;
                if !numeric(&t) {
                    return Err(err(format!("`{name}` needs numbers, not {t}")));
                }
                t
            }
            Op::Pow => {
                let t = lanewise(&ts[0], &ts[1]).ok_or_else(|| mismatch(&ts[0], &ts[1]))?;
                if !floating(&t) {
                    return Err(err(format!("`pow` needs float or double operands, not {t}")));
                }
                t
            }
            Op::Fma => {
                if ts[0] != ts[1] || ts[1] != ts[2] || !floating(&ts[0]) {
                    return Err(err(format!(
                        "`fma` needs three floating operands of one type, not {}, {}, {}",
                        ts[0], ts[1], ts[2]
                    )));
                }
                ts[0].clone()
            }
            Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => {
                if ts[0] != ts[1] {
                    return Err(mismatch(&ts[0], &ts[1]));
                }
                let ok = match ts[0] {
                    Type::Scalar(Scalar::Bool) => matches!(op, Op::Eq | Op::Ne),
                    Type::Scalar(_) => true,
                    _ => false,
                };
                if !ok {
                    return Err(err(format!("`{name}` cannot compare values of type {}", ts[0])));
                }
                Type::bool()
            }
            Op::And | Op::Or | Op::Not => {
                if let Some((i, t)) = ts.iter().enumerate().find(|(_, t)| **t != Type::bool()) {
                    return Err(Diagnostic::new(
                        self.span(args[i]),
                        format!("`{name}` needs bool operands, but this is {t}"),
                    ));
                }
                Type::bool()
            }
            Op::Neg | Op::Abs => {
                if !numeric(&ts[0]) {
                    return Err(err(format!("`{name}` needs a number, not {}", ts[0])));
                }
                ts[0].clone()
            }
            Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos => {
                if !floating(&ts[0]) {
                    let mut d = err(format!("`{name}` needs a float or double, not {}", ts[0]));
                    if ts[0] == Type::int() {
                        d = d.with_note("convert with (to-float x)");
                    }
                    return Err(d);
                }
                ts[0].clone()
            }
            Op::ToFloat | Op::ToInt | Op::ToDouble => {
                if !matches!(ts[0], Type::Scalar(_)) {
                    return Err(err(format!("`{name}` converts scalars, not {}", ts[0])));
                }
                Type::Scalar(match op {
                    Op::ToFloat => Scalar::Float,
                    Op::ToInt => Scalar::Int,
                    _ => Scalar::Double,
                })
            }
            Op::ToUint
            | Op::ToLong
            | Op::ToUlong
            | Op::As(_)
            | Op::BitAnd
            | Op::BitOr
            | Op::BitXor
            | Op::BitNot
            | Op::Shl
            | Op::Shr
            | Op::Rotl => return Err(err(format!("internal: `{name}` was not typed as an integer operator"))),
            Op::Dot => match (&ts[0], &ts[1]) {
                (Type::Vector(s, w), Type::Vector(t, v)) if s == t && w == v && s.is_floating() => Type::Scalar(*s),
                _ => {
                    return Err(err(format!(
                        "`dot` needs two floating vectors of one width, not {} and {}",
                        ts[0], ts[1]
                    )))
                }
            },
            Op::Length => match &ts[0] {
                Type::Vector(s, _) | Type::Scalar(s) if s.is_floating() => Type::Scalar(*s),
                t => return Err(err(format!("`length` needs a floating vector, not {t}"))),
            },
            Op::MakeVec => {
                let Type::Scalar(s) = ts[0] else {
                    return Err(err(format!("`vec` components must be scalars, not {}", ts[0])));
                };
                if ts.iter().any(|t| *t != ts[0]) {
                    return Err(err("`vec` components must all have the same type".into()));
                }
                if ![2, 3, 4, 8, 16].contains(&ts.len()) {
                    return Err(err(format!(
                        "`vec` takes 2, 3, 4, 8 or 16 components, not {}",
                        ts.len()
                    )));
                }
                Type::Vector(s, ts.len() as u8)
            }
            Op::VGet(i) => match ts[0] {
                Type::Vector(s, w) if i < w => Type::Scalar(s),
                ref t => {
                    return Err(err(format!(
                        "`vget #{i}` needs a vector of more than {i} lanes, not {t}"
                    )))
                }
            },
            Op::Tuple => Type::Tuple(ts.to_vec()),
            Op::Get(i) => match &ts[0] {
                Type::Tuple(cs) if (i as usize) < cs.len() => cs[i as usize].clone(),
                t => {
                    let mut d = err(format!("`get #{i}` needs a tuple of more than {i} components, not {t}"));
                    if let (true, Expr::Var(v)) = (self.prog.span(args[0]) == span, self.prog.expr(args[0])) {
                        // The `get` was made by the reader: a function of several parameters
                        // called with one value takes that value apart as a tuple, one `get`
                        // per parameter.
                        let params = self
                            .prog
                            .exprs
                            .iter()
                            .filter_map(|x| match x {
                                Expr::Op {
                                    op: Op::Get(j),
                                    args: a,
                                } if matches!(self.prog.expr(a[0]), Expr::Var(w) if w == v) => {
                                    Some(usize::from(*j) + 1)
                                }
                                _ => None,
                            })
                            .max()
                            .unwrap_or(usize::from(i) + 1);
                        d = Diagnostic::new(
                            span,
                            format!("this function takes {params} parameters, but is called with one value of type {t}"),
                        )
                        .with_note("a function of several parameters called with one tuple takes its components; this value is not a tuple with that many");
                    }
                    return Err(d);
                }
            },
            Op::At => {
                if ts[0] != Type::int() {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the index of `at` must be an int, not {}", ts[0]),
                    ));
                }
                match &ts[1] {
                    Type::Array(elem, _) => (**elem).clone(),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(args[1]),
                            format!("`at` needs an array, not {t}"),
                        ))
                    }
                }
            }
        })
    }
}
