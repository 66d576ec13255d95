//! Bounded arithmetic (`Arith::Bounded`).
//!
//! Each `float`/`double` is an interval argument about two numbers: X, the program's value in
//! exact real arithmetic (conversions between float types are the identity there), and D, the
//! value an OpenCL device computes. `Approx::value` approximates X within `own` (the error of this
//! f64 evaluation); `dev` bounds |D - X| for every evaluation that OpenCL C allows for the program:
//! each operation rounded as the OpenCL specification's accuracy table permits (correctly rounded
//! `+ - * fma`, 2.5 ulp float division, 3 ulp `sqrt exp log`, 4 ulp `sin cos`, 16 ulp `pow`,
//! subnormals possibly flushed), `reduceSeq` in its order, `reduce` and `dot` in any order, and
//! `a*b+c` possibly contracted to an fma (whose one rounding is within the two roundings charged).
//! So for a device result d of any program with the same exact value, |d - value| <= dev + own.
//! The propagation rules are the usual first-principles ones (for `a + b`: the operands' errors
//! add, then one rounding of at most u times the magnitude of the rounded sum), written out below
//! with their derivation where it is not immediate.

use super::*;

/// A `float` or `double` computed by [`Arith::Bounded`] (see the module documentation).
/// Bounds are rounded up to `f32`; an infinite bound means there is none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Approx {
    /// The exact value, within `own`.
    pub value: f64,
    /// Bound on |exact - value|.
    pub own: f32,
    /// Bound on |device - exact| for every OpenCL evaluation of the program.
    pub dev: f32,
    /// The OpenCL type is `double` (else `float`).
    pub double: bool,
}

/// Unit roundoff of `float` and `double`.
pub(super) const U32: f64 = 1.0 / 16_777_216.0;
pub(super) const U64: f64 = f64::EPSILON / 2.0;
/// Error of a Rust `f64` math function (`exp`, `sin`, `powf`, ...), generously: 2 ulp.
pub(super) const LIBM: f64 = 4.0 * U64;
/// Largest error of rounding a result to `f64` near zero (subnormal results).
pub(super) const TINY64: f64 = 5e-324;
/// Covers the rounding of the bound arithmetic itself.
pub(super) const SLACK: f64 = 1.0 + 1e-9;

/// Rounds a bound up to `f32`.
pub(super) fn up(x: f64) -> f32 {
    if x.is_nan() {
        return f32::INFINITY;
    }
    let y = x * SLACK;
    let f = y as f32;
    if f64::from(f) >= y {
        f
    } else {
        f.next_up()
    }
}

/// Working form of an [`Approx`] (or an exact input).
#[derive(Clone, Copy, Debug)]
pub(super) struct B {
    pub(super) v: f64,
    pub(super) own: f64,
    pub(super) dev: f64,
    pub(super) double: bool,
}

impl B {
    pub(super) fn of(v: &Value) -> Option<B> {
        Some(match v {
            Value::Float(f) => B::exact(f64::from(*f), false),
            Value::Double(d) => B::exact(*d, true),
            Value::Approx(a) => B {
                v: a.value,
                own: f64::from(a.own),
                dev: f64::from(a.dev),
                double: a.double,
            },
            _ => return None,
        })
    }

    pub(super) fn exact(v: f64, double: bool) -> B {
        B {
            v,
            own: 0.0,
            dev: 0.0,
            double,
        }
    }

    /// An `int` operand converted as C does: exactly to `double`; to `float` with one rounding
    /// once it has more than 24 significant bits.
    pub(super) fn int(i: i32, double: bool) -> B {
        let v = f64::from(i);
        let dev = if double || v.abs() <= 16_777_216.0 {
            0.0
        } else {
            U32 * v.abs()
        };
        B {
            v,
            own: 0.0,
            dev,
            double,
        }
    }

    pub(super) fn is_exact(&self) -> bool {
        self.own == 0.0 && self.dev == 0.0
    }

    /// Bound on |exact|.
    pub(super) fn mag(&self) -> f64 {
        self.v.abs() + self.own
    }

    /// Every value that the exact or a device evaluation can have lies in `v ± spread`.
    pub(super) fn spread(&self) -> f64 {
        self.own + self.dev
    }

    pub(super) fn unit(&self) -> f64 {
        if self.double {
            U64
        } else {
            U32
        }
    }

    /// Absolute error of one device rounding near zero (a flushed or subnormal result).
    pub(super) fn tiny(&self) -> f64 {
        if self.double {
            f64::MIN_POSITIVE
        } else {
            f64::from(f32::MIN_POSITIVE)
        }
    }

    /// The value with `own` and `dev` rounded up; no bound where it is not finite, or where the
    /// device type could overflow.
    pub(super) fn done(self) -> Value {
        let B {
            v,
            mut own,
            mut dev,
            double,
        } = self;
        let max = if double { f64::MAX } else { f64::from(f32::MAX) };
        if !v.is_finite() {
            // Exact operands give the same NaN or infinity everywhere (0/0, 1/0, sqrt(-1)).
            if own != 0.0 || dev != 0.0 {
                own = f64::INFINITY;
                dev = f64::INFINITY;
            }
        } else if v.abs() + own + dev > max {
            dev = f64::INFINITY;
        }
        Value::Approx(Approx {
            value: v,
            own: up(own),
            dev: up(dev),
            double,
        })
    }
}

/// `m u / (1 - m u)`: the relative error of a value rounded `m` times in sequence.
pub(super) fn gamma(m: f64, u: f64) -> f64 {
    if m * u < 0.5 {
        m * u / (1.0 - m * u)
    } else {
        f64::INFINITY
    }
}

/// Worst-case ulps of an OpenCL operation (OpenCL 1.2, tables 7.1 and 7.2); 0.5 is correctly
/// rounded.
pub(super) fn ulps(op: Op, double: bool) -> f64 {
    match op {
        Op::Div | Op::Sqrt if double => 0.5,
        Op::Div => 2.5,
        Op::Sqrt | Op::Exp | Op::Log => 3.0,
        Op::Sin | Op::Cos => 4.0,
        Op::Pow => 16.0,
        _ => 0.5,
    }
}

/// A sum of many terms in an order that is not known: any binary tree over the terms. Streams,
/// so that a reduction over 10^8 elements needs no copy of them.
#[derive(Clone, Copy, Debug)]
pub(super) struct AnyOrderSum {
    v: f64,
    own: f64,
    /// Sum of the terms' device errors and of their magnitudes as the device may see them.
    dev: f64,
    mag: f64,
    n: f64,
    double: bool,
}

impl AnyOrderSum {
    pub(super) fn new() -> AnyOrderSum {
        AnyOrderSum {
            v: 0.0,
            own: 0.0,
            dev: 0.0,
            mag: 0.0,
            n: 0.0,
            double: false,
        }
    }

    pub(super) fn add(&mut self, t: B) {
        // This evaluation adds in sequence: one f64 rounding of the partial sum per term.
        self.v += t.v;
        self.own += t.own + U64 * self.v.abs() + TINY64;
        self.dev += t.dev;
        self.mag += t.v.abs() + t.own + t.dev;
        self.n += 1.0;
        self.double |= t.double;
    }

    /// Any tree of n-1 additions over device terms D_i: each D_i goes through at most n-1
    /// roundings, so |result - sum D_i| <= gamma(n-1) sum |D_i|, and |sum D_i - sum X_i| <=
    /// sum dev_i (Higham, Accuracy and Stability of Numerical Algorithms, section 4.2).
    pub(super) fn done(self) -> Value {
        let k = (self.n - 1.0).max(0.0);
        let t = B::exact(0.0, self.double);
        let dev = self.dev + gamma(k, t.unit()) * self.mag + 2.0 * k * t.tiny();
        B {
            v: self.v,
            own: self.own,
            dev,
            double: self.double,
        }
        .done()
    }
}

/// How the high-level `reduce`'s operator lets the order of evaluation change its bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ReduceOp {
    /// `+`: the bound depends on the order; [`AnyOrderSum`] covers all of them.
    Sum,
    /// `*`, `min`, `max`: the sequential bound covers every order (the relative errors of a
    /// product multiply whatever the tree; `min`/`max` do not round).
    OrderFree,
}

impl<'a> Interp<'a> {
    /// The operator of `(lambda (a b) (op a b))` (or `(op b a)`), when it is commutative and
    /// one that [`Interp::reduce_any_order`] knows how to bound in every order.
    pub(super) fn binary_op_of(&self, f: ExprId) -> Option<(Op, ReduceOp)> {
        let Expr::Lambda { params, body } = self.prog.expr(f) else {
            return None;
        };
        let Expr::Op { op, args } = self.prog.expr(*body) else {
            return None;
        };
        let vars: Vec<Option<VarId>> = args
            .iter()
            .map(|a| match self.prog.expr(*a) {
                Expr::Var(v) => Some(*v),
                _ => None,
            })
            .collect();
        let same = match (params.as_slice(), vars.as_slice()) {
            ([p, q], [Some(x), Some(y)]) => (p == x && q == y) || (p == y && q == x),
            _ => false,
        };
        match op {
            _ if !same => None,
            Op::Add => Some((*op, ReduceOp::Sum)),
            Op::Mul | Op::Min | Op::Max => Some((*op, ReduceOp::OrderFree)),
            _ => None,
        }
    }

    /// A high-level `reduce` under [`Arith::Bounded`]: its bound must hold for every order the
    /// compiler may choose. A `reduce` whose operator is not recognised gets no device bound.
    pub(super) fn reduce_any_order(
        &mut self,
        id: ExprId,
        f: ExprId,
        op: Option<(Op, ReduceOp)>,
        z: Value,
        xs: ExprId,
    ) -> Res<Value> {
        let summable = |v: &Value| match v {
            Value::Vector(l) => l.iter().all(|x| B::of(x).is_some()),
            x => B::of(x).is_some(),
        };
        if op.map(|(_, k)| k) == Some(ReduceOp::Sum) && summable(&z) {
            let width = match &z {
                Value::Vector(l) => Some(l.len()),
                _ => None,
            };
            let mut lanes = vec![AnyOrderSum::new(); width.unwrap_or(1)];
            let mut add = |s: &Self, at: ExprId, x: &Value| -> Res<()> {
                match (x, width) {
                    (Value::Vector(l), Some(w)) if l.len() == w => {
                        for (lane, x) in lanes.iter_mut().zip(l) {
                            match B::of(x) {
                                Some(b) => lane.add(b),
                                None => return s.err(at, format!("`reduce` of {}", describe(x))),
                            }
                        }
                        Ok(())
                    }
                    (x, None) => match B::of(x) {
                        Some(b) => {
                            lanes[0].add(b);
                            Ok(())
                        }
                        None => s.err(at, format!("`reduce` of {}", describe(x))),
                    },
                    (x, Some(w)) => s.err(at, format!("`reduce` of {} with a vector of {w} lanes", describe(x))),
                }
            };
            add(self, id, &z)?;
            self.each(xs, "reduce", |s, x| {
                s.step(id)?;
                add(s, id, &x)
            })?;
            let sum = match width {
                Some(_) => Value::Vector(lanes.into_iter().map(AnyOrderSum::done).collect()),
                None => lanes[0].done(),
            };
            return Ok(Value::Array(vec![sum]));
        }
        match self.fold(f, op.map(|(o, _)| o), z, xs)? {
            acc if op.is_some() => Ok(acc),
            acc => Ok(without_dev_bound(acc)),
        }
    }

    /// `dot`'s lane products summed in any order.
    pub(super) fn sum_any_order(&self, id: ExprId, terms: Vec<Value>) -> Res<Value> {
        let mut s = AnyOrderSum::new();
        for t in &terms {
            match B::of(t) {
                Some(b) => s.add(b),
                None => return self.err(id, format!("`dot` of {}", describe(t))),
            }
        }
        Ok(s.done())
    }

    /// One scalar operation under [`Arith::Bounded`]; `None` when the operands are not numbers
    /// this mode handles (the caller reports it).
    pub(super) fn bounded_scalar(&self, id: ExprId, op: Op, args: &[Value]) -> Option<Res<Value>> {
        let double = args
            .iter()
            .any(|a| matches!(a, Value::Double(_) | Value::Approx(Approx { double: true, .. })));
        let num = |a: &Value| match a {
            Value::Int(i) => Some(B::int(*i, double)),
            other => B::of(other),
        };
        Some(Ok(match (op, args) {
            (Op::ToFloat, [Value::Float(f)]) => Value::Float(*f),
            (Op::ToFloat, [x]) => {
                let a = B::of(x)?;
                let dev = if a.double {
                    a.dev + U32 * (a.v.abs() + a.spread()) + f64::from(f32::MIN_POSITIVE)
                } else {
                    a.dev
                };
                B {
                    dev,
                    double: false,
                    ..a
                }
                .done()
            }
            (Op::ToDouble, [x]) => B {
                double: true,
                ..B::of(x)?
            }
            .done(),
            (Op::ToInt, [x]) => {
                let a = B::of(x)?;
                let (lo, hi) = (a.v - a.spread(), a.v + a.spread());
                if !a.is_exact() && (a.v.is_nan() || (lo as i32) != (hi as i32)) {
                    return Some(self.fail(
                        id,
                        ErrorKind::Unbounded,
                        format!(
                            "`to-int` of {} ± {:.3e}: rounding can change the integer",
                            a.v,
                            a.spread()
                        ),
                    ));
                }
                Value::Int(a.v as i32)
            }
            (Op::ToUint, [x]) => return self.bounded_int(id, op, Scalar::Uint, false, x),
            (Op::ToLong, [x]) => return self.bounded_int(id, op, Scalar::Long, false, x),
            (Op::ToUlong, [x]) => return self.bounded_int(id, op, Scalar::Ulong, false, x),
            (Op::As(to), [x]) => return self.bounded_int(id, op, to, true, x),
            (Op::Neg | Op::Abs, [x]) => {
                let a = B::of(x)?;
                B {
                    v: if op == Op::Neg { -a.v } else { a.v.abs() },
                    ..a
                }
                .done()
            }
            (Op::Sqrt | Op::Exp | Op::Log | Op::Sin | Op::Cos, [x]) => unary(op, B::of(x)?),
            (Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne, [a, b]) => {
                let (a, b) = (num(a)?, num(b)?);
                match certain_compare(op, a, b) {
                    Some(c) => Value::Bool(c),
                    None => {
                        return Some(self.fail(
                            id,
                            ErrorKind::Unbounded,
                            format!(
                                "`{}` of {} ± {:.3e} and {} ± {:.3e}: rounding can change the outcome",
                                op.name(),
                                a.v,
                                a.spread(),
                                b.v,
                                b.spread()
                            ),
                        ))
                    }
                }
            }
            (_, [a, b]) => binary(op, num(a)?, num(b)?, self.tf32)?,
            (Op::Fma, [a, b, c]) => {
                let (a, b, c) = (num(a)?, num(b)?, num(c)?);
                let (_, p_own, mut p_dev) = product(a, b);
                if self.tf32 && !double {
                    p_dev += tf32_product(a, b);
                }
                let v = a.v.mul_add(b.v, c.v);
                let own = p_own + c.own + U64 * v.abs() + TINY64;
                let p = p_dev + c.dev;
                let r = B {
                    v,
                    own,
                    dev: 0.0,
                    double: a.double || b.double || c.double,
                };
                B {
                    dev: p + r.unit() * (v.abs() + own + p) + r.tiny(),
                    ..r
                }
                .done()
            }
            _ => return None,
        }))
    }
}

/// The device error that rounding both operands of a `float` product to TF32 adds
/// ([`crate::Precision::Tf32`]): the device's operands `Da`, `Db` (within `dev` of the exact
/// values) become `Da(1+ea)`, `Db(1+eb)` with |ea|, |eb| <= `TF32_UNIT` = t, so the product moves
/// by at most |Da Db| (2t + t^2) before it is rounded as any product is.
pub(super) fn tf32_product(a: B, b: B) -> f64 {
    let t = crate::precision::TF32_UNIT;
    (a.mag() + a.dev) * (b.mag() + b.dev) * (2.0 * t + t * t)
}

/// Propagated errors of `a * b`: (value, own error before rounding, device error before rounding).
/// |Xa Xb - va vb| <= |va| ownb + |vb| owna + owna ownb, and likewise for the device with |X|.
pub(super) fn product(a: B, b: B) -> (f64, f64, f64) {
    let p_own = a.v.abs() * b.own + b.v.abs() * a.own + a.own * b.own;
    let p_dev = a.mag() * b.dev + b.mag() * a.dev + a.dev * b.dev;
    (a.v * b.v, p_own, p_dev)
}

/// `a op b`; with `tf32`, a `float` product's device bound covers TF32 operands
/// (`tf32_product`).
pub(super) fn binary(op: Op, a: B, b: B, tf32: bool) -> Option<Value> {
    let double = a.double || b.double;
    // Device rounding of a result of magnitude at most `m`, `k` ulps (an ulp is at most 2u|y|).
    let round = |m: f64| {
        let t = B::exact(0.0, double);
        2.0 * ulps(op, double) * t.unit() * m + t.tiny()
    };
    let inf = f64::INFINITY;
    let (v, own, p) = match op {
        Op::Add | Op::Sub => {
            let v = if op == Op::Add { a.v + b.v } else { a.v - b.v };
            (v, a.own + b.own + U64 * v.abs() + TINY64, a.dev + b.dev)
        }
        Op::Mul => {
            let (v, p_own, p_dev) = product(a, b);
            let rounded = if tf32 && !double { tf32_product(a, b) } else { 0.0 };
            (v, p_own + U64 * v.abs() + TINY64, p_dev + rounded)
        }
        Op::Div => {
            let v = a.v / b.v;
            // |Xa/Xb - va/vb| = |(Xa-va) vb - va (Xb-vb)| / |Xb vb| with |Xb| >= |vb| - ownb = lx.
            let lx = b.v.abs() - b.own;
            let own = if lx > 0.0 {
                a.own / lx + a.v.abs() * b.own / (lx * b.v.abs()) + U64 * v.abs() + TINY64
            } else {
                inf
            };
            // |Da/Db - Xa/Xb| <= (deva |Xb| + |Xa| devb) / (|Db| |Xb|), |Db| >= lx - devb = ld.
            let ld = lx - b.dev;
            let p = if lx > 0.0 && ld > 0.0 {
                a.dev / ld + a.mag() * b.dev / (ld * lx)
            } else {
                inf
            };
            (v, own, p)
        }
        Op::Rem => {
            // fmod is exact, but jumps: only exact operands have a bound.
            let e = if a.is_exact() && b.is_exact() { 0.0 } else { inf };
            return Some(
                B {
                    v: a.v % b.v,
                    own: e,
                    dev: e,
                    double,
                }
                .done(),
            );
        }
        Op::Min | Op::Max => {
            // 1-Lipschitz in the larger of the operands' errors, and not rounded.
            let v = if op == Op::Min { a.v.min(b.v) } else { a.v.max(b.v) };
            return Some(
                B {
                    v,
                    own: a.own.max(b.own),
                    dev: a.dev.max(b.dev),
                    double,
                }
                .done(),
            );
        }
        Op::Pow => {
            let v = a.v.powf(b.v);
            if a.is_exact() && b.is_exact() {
                (v, LIBM * v.abs(), 0.0)
            } else if a.v - a.spread() > 0.0 {
                // For a positive base, x^y is monotone in each argument: its extremes over a
                // box are at the corners.
                let corners = |ea: f64, eb: f64| {
                    let c = [
                        (a.v - ea).powf(b.v - eb),
                        (a.v - ea).powf(b.v + eb),
                        (a.v + ea).powf(b.v - eb),
                        (a.v + ea).powf(b.v + eb),
                    ];
                    let lo = c.iter().copied().fold(inf, f64::min);
                    let hi = c.iter().copied().fold(-inf, f64::max);
                    (lo, hi)
                };
                let (lo, hi) = corners(a.own, b.own);
                let own = (hi - v).max(v - lo) + 2.0 * LIBM * hi.abs().max(lo.abs());
                let (lo, hi) = corners(a.spread(), b.spread());
                let p = (hi - lo) + 2.0 * LIBM * hi.abs().max(lo.abs());
                (v, own, p)
            } else {
                (v, inf, inf)
            }
        }
        _ => return None,
    };
    let m = v.abs() + own + p;
    Some(
        B {
            v,
            own,
            dev: p + round(m),
            double,
        }
        .done(),
    )
}

pub(super) fn unary(op: Op, a: B) -> Value {
    let f = |x: f64| match op {
        Op::Sqrt => x.sqrt(),
        Op::Exp => x.exp(),
        Op::Log => x.ln(),
        Op::Sin => x.sin(),
        _ => x.cos(),
    };
    let v = f(a.v);
    let dev_round = |m: f64| 2.0 * ulps(op, a.double) * a.unit() * m + a.tiny();
    let libm = if op == Op::Sqrt { U64 } else { LIBM };
    let inf = f64::INFINITY;
    let (own, p) = match op {
        // 1-Lipschitz, values in [-1, 1].
        Op::Sin | Op::Cos => (a.own + libm, a.dev),
        _ => {
            let domain_lo = match op {
                Op::Log => f64::MIN_POSITIVE,
                Op::Sqrt => 0.0,
                _ => f64::NEG_INFINITY,
            };
            // Increasing: the image of v ± e is [f(v - e), f(v + e)].
            let spread = |e: f64| {
                if e == 0.0 {
                    Some(0.0)
                } else if a.v - e < domain_lo {
                    None
                } else {
                    let (lo, hi) = (f(a.v - e), f(a.v + e));
                    Some((hi - v).max(v - lo) + 2.0 * libm * hi.abs().max(lo.abs()))
                }
            };
            let own = spread(a.own).map_or(inf, |s| s + libm * v.abs());
            // Both the exact and the device operand lie in v ± (own + dev).
            let p = spread(a.spread()).map_or(inf, |s| 2.0 * s);
            (own, p)
        }
    };
    let m = v.abs() + own + p;
    B {
        v,
        own,
        dev: p + dev_round(m),
        double: a.double,
    }
    .done()
}

/// The outcome of a comparison when it is the same for the exact values, for this evaluation
/// and for every device evaluation.
pub(super) fn certain_compare(op: Op, a: B, b: B) -> Option<bool> {
    if a.is_exact() && b.is_exact() {
        return float_compare(op, a.v, b.v);
    }
    if a.v.is_nan() || b.v.is_nan() {
        return None;
    }
    let (alo, ahi) = (a.v - a.spread(), a.v + a.spread());
    let (blo, bhi) = (b.v - b.spread(), b.v + b.spread());
    let lt = if ahi < blo {
        Some(true)
    } else if alo >= bhi {
        Some(false)
    } else {
        None
    };
    let gt = if alo > bhi {
        Some(true)
    } else if ahi <= blo {
        Some(false)
    } else {
        None
    };
    let ne = if ahi < blo || bhi < alo { Some(true) } else { None };
    match op {
        Op::Lt => lt,
        Op::Ge => lt.map(|c| !c),
        Op::Gt => gt,
        Op::Le => gt.map(|c| !c),
        Op::Ne => ne,
        Op::Eq => ne.map(|c| !c),
        _ => None,
    }
}

/// `v` with no device bound on any of its floats: their value depends on an order of
/// evaluation that this interpreter cannot bound.
pub(super) fn without_dev_bound(v: Value) -> Value {
    match v {
        Value::Approx(a) => Value::Approx(Approx {
            dev: f32::INFINITY,
            ..a
        }),
        Value::Float(f) => Value::Approx(Approx {
            value: f64::from(f),
            own: 0.0,
            dev: f32::INFINITY,
            double: false,
        }),
        Value::Double(d) => Value::Approx(Approx {
            value: d,
            own: 0.0,
            dev: f32::INFINITY,
            double: true,
        }),
        Value::Array(xs) => Value::Array(xs.into_iter().map(without_dev_bound).collect()),
        Value::Tuple(xs) => Value::Tuple(xs.into_iter().map(without_dev_bound).collect()),
        Value::Vector(xs) => Value::Vector(xs.into_iter().map(without_dev_bound).collect()),
        other => other,
    }
}
