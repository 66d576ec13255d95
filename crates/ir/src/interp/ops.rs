//! Scalar operators: their arguments, vectors lane by lane, and scalars in each arithmetic
//! (plain, or bounded by [`Arith::Bounded`] through `approx`).

use super::*;

impl<'a> Interp<'a> {
    /// `args` for an operator, naming it only when there is an error to report.
    pub(super) fn op_args<const K: usize>(&self, id: ExprId, op: Op, args: &[ExprId]) -> Res<[ExprId; K]> {
        match <[ExprId; K]>::try_from(args) {
            Ok(a) => Ok(a),
            Err(_) => self.args(id, args, &op.name()),
        }
    }

    pub(super) fn op(&mut self, id: ExprId, op: Op, args: &[ExprId]) -> Res<Value> {
        match op {
            Op::And | Op::Or => {
                let [a, b] = self.op_args(id, op, args)?;
                let a = self.eval(a)?;
                // Short-circuit like C's `&&` / `||`; vector operands are lane-wise and strict.
                match (op, &a) {
                    (Op::And, Value::Bool(false)) => return Ok(Value::Bool(false)),
                    (Op::Or, Value::Bool(true)) => return Ok(Value::Bool(true)),
                    _ => {}
                }
                let b = self.eval(b)?;
                self.lanewise(id, op, &[a, b])
            }
            Op::Tuple => {
                let mut vs = vec![];
                for a in args {
                    vs.push(self.eval(*a)?);
                }
                Ok(Value::Tuple(vs))
            }
            Op::MakeVec => {
                let mut vs = vec![];
                for a in args {
                    match self.eval(*a)? {
                        v if is_scalar(&v) => vs.push(v),
                        other => {
                            return self.err(
                                *a,
                                format!("a vector component must be a scalar, not {}", describe(&other)),
                            )
                        }
                    }
                }
                if let Some(v) = vs.iter().find(|v| scalar_kind(v) != scalar_kind(&vs[0])) {
                    return self.err(
                        id,
                        format!(
                            "the components of `vec` must all have one type: {} and {}",
                            describe(&vs[0]),
                            describe(v)
                        ),
                    );
                }
                Ok(Value::Vector(vs))
            }
            Op::Get(i) => {
                let [t] = self.op_args(id, op, args)?;
                match &*self.shared(t)? {
                    Value::Tuple(cs) => match cs.get(usize::from(i)) {
                        Some(c) => Ok(c.clone()),
                        None => self.err(id, format!("`get #{i}` of a tuple of {} components", cs.len())),
                    },
                    other => self.err(id, format!("`get` expects a tuple, not {}", describe(other))),
                }
            }
            Op::VGet(i) => {
                let [v] = self.op_args(id, op, args)?;
                match &*self.shared(v)? {
                    Value::Vector(ls) => match ls.get(usize::from(i)) {
                        Some(c) => Ok(c.clone()),
                        None => self.err(id, format!("`vget #{i}` of a vector of {} lanes", ls.len())),
                    },
                    other => self.err(id, format!("`vget` expects a vector, not {}", describe(other))),
                }
            }
            Op::At => {
                let [i, xs] = self.op_args(id, op, args)?;
                let i = match self.eval(i)? {
                    Value::Int(i) => i,
                    other => return self.err(i, format!("an array index must be an int, not {}", describe(&other))),
                };
                match &*self.shared(xs)? {
                    Value::Array(xs) => match usize::try_from(i).ok().and_then(|u| xs.get(u)) {
                        Some(x) => Ok(x.clone()),
                        None => self.err(
                            id,
                            format!("index {i} out of range for an array of length {}", xs.len()),
                        ),
                    },
                    other => self.err(id, format!("`at` expects an array, not {}", describe(other))),
                }
            }
            Op::Dot | Op::Length => {
                let name = op.name();
                let mut vs = vec![];
                for a in args {
                    vs.push(self.eval(*a)?);
                }
                let (a, b) = match (op, vs.as_slice()) {
                    (Op::Dot, [a, b]) => (a.clone(), b.clone()),
                    (Op::Length, [a]) => (a.clone(), a.clone()),
                    _ => return self.err(id, format!("internal error: `{name}` has {} argument(s)", vs.len())),
                };
                let lanes = |v: Value| match v {
                    Value::Vector(l) => l,
                    s => vec![s],
                };
                let (a, b) = (lanes(a), lanes(b));
                if a.len() != b.len() {
                    return self.err(
                        id,
                        format!("`{name}` of vectors of different widths ({} and {})", a.len(), b.len()),
                    );
                }
                let mut products = Vec::with_capacity(a.len());
                for (x, y) in a.into_iter().zip(b) {
                    products.push(self.scalar(id, Op::Mul, &[x, y])?);
                }
                let sum = if self.bounded && products.len() > 1 {
                    // OpenCL does not say in which order `dot` adds the lane products.
                    Some(self.sum_any_order(id, products)?)
                } else {
                    let mut sum: Option<Value> = None;
                    for p in products {
                        sum = Some(match sum {
                            None => p,
                            Some(s) => self.scalar(id, Op::Add, &[s, p])?,
                        });
                    }
                    sum
                };
                let Some(sum) = sum else {
                    return self.err(id, format!("`{name}` of an empty vector"));
                };
                if !matches!(sum, Value::Float(_) | Value::Double(_) | Value::Approx(_)) {
                    return self.err(
                        id,
                        format!("`{name}` works on float vectors, not on {}", describe(&sum)),
                    );
                }
                if op == Op::Length {
                    self.scalar(id, Op::Sqrt, &[sum])
                } else {
                    Ok(sum)
                }
            }
            _ => match args {
                [a] => {
                    let a = self.eval(*a)?;
                    self.lanewise(id, op, &[a])
                }
                [a, b] => {
                    let a = self.eval(*a)?;
                    let b = self.eval(*b)?;
                    self.lanewise(id, op, &[a, b])
                }
                _ => {
                    let mut vs = Vec::with_capacity(args.len());
                    for a in args {
                        vs.push(self.eval(*a)?);
                    }
                    self.lanewise(id, op, &vs)
                }
            },
        }
    }

    /// Applies a scalar operator lane by lane when an operand is a vector, broadcasting scalars.
    pub(super) fn lanewise(&self, id: ExprId, op: Op, args: &[Value]) -> Res<Value> {
        let mut width = None;
        for a in args {
            match a {
                Value::Vector(l) => match width {
                    Some(w) if w != l.len() => {
                        return self.err(
                            id,
                            format!("`{}` of vectors of different widths ({w} and {})", op.name(), l.len()),
                        )
                    }
                    _ => width = Some(l.len()),
                },
                v if is_scalar(v) => {}
                other => {
                    return self.err(
                        id,
                        format!(
                            "`{}` works on scalars and vectors, not on {}",
                            op.name(),
                            describe(other)
                        ),
                    )
                }
            }
        }
        let Some(w) = width else {
            return self.scalar(id, op, args);
        };
        let mut out = Vec::with_capacity(w);
        for lane in 0..w {
            let lane_args: Vec<Value> = args
                .iter()
                .map(|a| match a {
                    Value::Vector(l) => l[lane].clone(),
                    s => s.clone(),
                })
                .collect();
            out.push(self.scalar(id, op, &lane_args)?);
        }
        Ok(Value::Vector(out))
    }

    /// One scalar operation, OpenCL C semantics.
    pub(super) fn scalar(&self, id: ExprId, op: Op, args: &[Value]) -> Res<Value> {
        use Value::*;
        let bad = || {
            let kinds: Vec<String> = args.iter().map(describe).collect();
            self.err(
                id,
                format!("`{}` cannot be applied to {}", op.name(), kinds.join(" and ")),
            )
        };
        if self.bounded && args.iter().any(|a| matches!(a, Float(_) | Double(_) | Approx(_))) {
            return self.bounded_scalar(id, op, args).unwrap_or_else(bad);
        }
        if let Some(r) = ints::scalar(op, args) {
            return r.or_else(|m| self.err(id, m));
        }
        match (op, args) {
            (Op::Not, [Bool(b)]) => Ok(Bool(!b)),
            (Op::And, [Bool(a), Bool(b)]) => Ok(Bool(*a && *b)),
            (Op::Or, [Bool(a), Bool(b)]) => Ok(Bool(*a || *b)),
            (Op::Eq, [Bool(a), Bool(b)]) => Ok(Bool(a == b)),
            (Op::Ne, [Bool(a), Bool(b)]) => Ok(Bool(a != b)),
            (Op::ToFloat, [x]) => match x {
                Float(f) => Ok(Float(*f)),
                Double(d) => Ok(Float(*d as f32)),
                Int(i) => Ok(Float(*i as f32)),
                Bool(b) => Ok(Float(f32::from(u8::from(*b)))),
                _ => bad(),
            },
            (Op::ToDouble, [x]) => match x {
                Float(f) => Ok(Double(f64::from(*f))),
                Double(d) => Ok(Double(*d)),
                Int(i) => Ok(Double(f64::from(*i))),
                Bool(b) => Ok(Double(f64::from(u8::from(*b)))),
                _ => bad(),
            },
            // Truncation toward zero as a C cast; out of range saturates and NaN gives 0 (C leaves
            // it undefined; the kernels use `convert_int_sat`, which OpenCL defines so).
            (Op::ToInt, [x]) => match x {
                Float(f) => Ok(Int(*f as i32)),
                Double(d) => Ok(Int(*d as i32)),
                Int(i) => Ok(Int(*i)),
                Bool(b) => Ok(Int(i32::from(*b))),
                _ => bad(),
            },
            (_, [Int(a)]) => match op {
                Op::Neg => Ok(Int(a.wrapping_neg())),
                Op::Abs => Ok(Int(a.wrapping_abs())),
                _ => bad(),
            },
            // f32 operations in f32: computing in f64 and rounding would differ.
            (_, [Float(a)]) => unary_f32(op, *a).map_or_else(bad, |r| Ok(Float(r))),
            (_, [Double(a)]) => match unary_f64(op, *a) {
                Some(r) => Ok(Double(r)),
                None => bad(),
            },
            (_, [Int(a), Int(b)]) => {
                let (a, b) = (*a, *b);
                Ok(match op {
                    Op::Add => Int(a.wrapping_add(b)),
                    Op::Sub => Int(a.wrapping_sub(b)),
                    Op::Mul => Int(a.wrapping_mul(b)),
                    Op::Div | Op::Rem if b == 0 => {
                        return self.err(
                            id,
                            format!(
                                "integer {} by zero",
                                if op == Op::Div { "division" } else { "remainder" }
                            ),
                        )
                    }
                    Op::Div => Int(a.wrapping_div(b)),
                    Op::Rem => Int(a.wrapping_rem(b)),
                    Op::Min => Int(a.min(b)),
                    Op::Max => Int(a.max(b)),
                    _ => match compare(op, a.cmp(&b)) {
                        Some(c) => Bool(c),
                        None => return bad(),
                    },
                })
            }
            (_, [a, b]) => match promote(a, b) {
                Some(Promoted::F32(a, b)) => match op {
                    Op::Add => Ok(Float(a + b)),
                    Op::Sub => Ok(Float(a - b)),
                    Op::Mul => Ok(Float(a * b)),
                    Op::Div => Ok(Float(a / b)),
                    Op::Rem => Ok(Float(a % b)),
                    Op::Min => Ok(Float(a.min(b))),
                    Op::Max => Ok(Float(a.max(b))),
                    Op::Pow => Ok(Float(a.powf(b))),
                    _ => float_compare(op, f64::from(a), f64::from(b)).map_or_else(bad, |c| Ok(Bool(c))),
                },
                Some(Promoted::F64(a, b)) => match op {
                    Op::Add => Ok(Double(a + b)),
                    Op::Sub => Ok(Double(a - b)),
                    Op::Mul => Ok(Double(a * b)),
                    Op::Div => Ok(Double(a / b)),
                    Op::Rem => Ok(Double(a % b)),
                    Op::Min => Ok(Double(a.min(b))),
                    Op::Max => Ok(Double(a.max(b))),
                    Op::Pow => Ok(Double(a.powf(b))),
                    _ => float_compare(op, a, b).map_or_else(bad, |c| Ok(Bool(c))),
                },
                None => bad(),
            },
            (Op::Fma, [a, b, c]) => match (promote(a, b), c) {
                (Some(Promoted::F32(a, b)), Float(c)) => Ok(Float(a.mul_add(b, *c))),
                (Some(Promoted::F32(a, b)), Int(c)) => Ok(Float(a.mul_add(b, *c as f32))),
                (Some(Promoted::F64(a, b)), Double(c)) => Ok(Double(a.mul_add(b, *c))),
                (Some(Promoted::F64(a, b)), Float(c)) => Ok(Double(a.mul_add(b, f64::from(*c)))),
                (Some(Promoted::F64(a, b)), Int(c)) => Ok(Double(a.mul_add(b, f64::from(*c)))),
                (Some(Promoted::F32(a, b)), Double(c)) => Ok(Double(f64::from(a).mul_add(f64::from(b), *c))),
                _ => bad(),
            },
            _ => bad(),
        }
    }
}
