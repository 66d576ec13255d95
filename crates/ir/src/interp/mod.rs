//! Reference interpreter: the oracle that every compiled program is checked against.
//!
//! It gives every primitive its high-level meaning (all the `map` flavours are `map`, `toX` is
//! the identity, ...), so a program means the same before and after any rewrite. It is written
//! to be obviously right rather than fast, with a few exceptions that keep it usable on inputs
//! of 10^8 elements: variables are shared (parameters are borrowed, arrays are `Rc`) so reading
//! `(at i xs)` inside a per-element lambda does not copy `xs`, maps and reductions over a variable
//! walk it without copying it, no allocation happens per scalar operation or per binding of a
//! scalar, and iteration (map, reduce, iterate, ...) is a loop, so the Rust stack only grows with
//! the nesting depth of the program, never with array lengths.
//!
//! Scalar operators follow OpenCL C: `float` arithmetic is done in `f32`, integer arithmetic wraps
//! (signed overflow is undefined in OpenCL C, so the kernels compute signed arithmetic in the
//! unsigned type; `ints` holds the integer semantics and every case it fixes), integer `/` and
//! `%` truncate toward zero and fail on a zero divisor, `%` on floats is `fmod`. Operands of
//! different scalar types meet by C's usual arithmetic conversions (`int` < `float` < `double`).
//! `and`/`or` on scalar operands short-circuit as C's `&&`/`||` do, which matters when the right
//! operand would fail (an `at` guarded by a bounds test).
//!
//! [`Arith::Bounded`] evaluates the same program for checking device results instead:
//! floating-point values become [`Approx`] values, computed in `f64` and carrying two error
//! bounds, one for that evaluation and one covering every OpenCL evaluation of the program (see
//! `approx`).
//!
//! This module holds the values, the entry points and the walk over expressions (bindings,
//! variables, steps); `prims` gives the primitives their meaning, `ops` the scalar operators,
//! `approx` the bounded arithmetic and `ints` the integer types.

use crate::diag::Span;
use crate::expr::{Expr, ExprId, Lit, MapKind, Op, Prim, Program, ReduceKind, VarId};
use crate::types::Scalar;
use arith::ArithExpr;
use std::fmt::Write as _;
use std::rc::Rc;

mod approx;
mod ints;
mod ops;
mod prims;
mod scan;

pub use approx::*;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f32),
    Double(f64),
    Int(i32),
    Bool(bool),
    Uint(u32),
    Long(i64),
    Ulong(u64),
    /// Lanes of an OpenCL vector, all of one scalar kind.
    Vector(Vec<Value>),
    Tuple(Vec<Value>),
    /// Also existential arrays: their run-time length is the `Vec`'s length.
    Array(Vec<Value>),
    /// A `float` or `double` computed by [`Arith::Bounded`]; never produced otherwise.
    Approx(Approx),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub span: Span,
    pub message: String,
    pub kind: ErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The program fails on these inputs (index out of range, division by zero, ...).
    Failure,
    /// [`Arith::Bounded`] only: a comparison or conversion to `int` whose outcome rounding could
    /// change, so no bound covers every OpenCL evaluation.
    Unbounded,
    /// More steps than [`Options::max_steps`].
    StepLimit,
}

/// How floating-point arithmetic is evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arith {
    /// OpenCL C semantics: `float` in `f32`, `double` in `f64`, in the program's order.
    #[default]
    Native,
    /// Every `float`/`double` operation in `f64`, with error bounds (see [`Approx`]).
    Bounded,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    pub arith: Arith,
    /// Stop with [`ErrorKind::StepLimit`] after this many operator and primitive evaluations.
    pub max_steps: Option<u64>,
    /// With [`Arith::Bounded`]: the arithmetic the device may use. Under
    /// [`crate::Precision::Tf32`] each `float` product's device bound also covers its operands
    /// rounded to TF32 (`approx::tf32_product`); values are computed the same either way.
    pub precision: crate::Precision,
}

/// Whether two results agree: the same shape and non-float values, floats within `rel` of the
/// larger magnitude (absolutely, below 1), as reassociated float arithmetic allows.
pub fn approx_eq(a: &Value, b: &Value, rel: f64) -> bool {
    let c = |x: f64, y: f64| (x - y).abs() <= rel * x.abs().max(y.abs()).max(1.0);
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => c(f64::from(*x), f64::from(*y)),
        (Value::Double(x), Value::Double(y)) => c(*x, *y),
        (Value::Array(x), Value::Array(y))
        | (Value::Tuple(x), Value::Tuple(y))
        | (Value::Vector(x), Value::Vector(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| approx_eq(x, y, rel))
        }
        _ => a == b,
    }
}

/// Runs `prog` on `args` (one per parameter, in order); `sizes` gives the size variables.
pub fn eval(prog: &Program, args: &[Value], sizes: &dyn Fn(&str) -> Option<i64>) -> Result<Value, RuntimeError> {
    eval_with(prog, args, sizes, &Options::default())
}

/// [`eval`] with a choice of arithmetic and a step limit.
pub fn eval_with(
    prog: &Program,
    args: &[Value],
    sizes: &dyn Fn(&str) -> Option<i64>,
    opts: &Options,
) -> Result<Value, RuntimeError> {
    if args.len() != prog.params.len() {
        return Err(RuntimeError {
            span: prog.span(prog.body),
            message: format!(
                "the program takes {} argument(s) but {} were given",
                prog.params.len(),
                args.len()
            ),
            kind: ErrorKind::Failure,
        });
    }
    let mut it = Interp {
        prog,
        sizes,
        env: vec![Slot::Unbound; prog.vars.len()],
        bounded: opts.arith == Arith::Bounded,
        tf32: opts.precision == crate::Precision::Tf32,
        steps_left: opts.max_steps.unwrap_or(u64::MAX),
    };
    for (p, a) in prog.params.iter().zip(args) {
        it.set(p.var, Slot::Param(a))?;
    }
    it.eval(prog.body)
}

type Res<T> = Result<T, RuntimeError>;

/// The value of a variable. Scalars are stored inline so that binding one does not allocate.
#[derive(Clone)]
enum Slot<'a> {
    Unbound,
    Param(&'a Value),
    Small(Value),
    Shared(Rc<Value>),
}

impl<'a> Slot<'a> {
    fn of(v: Value) -> Slot<'a> {
        match v {
            Value::Array(_) | Value::Tuple(_) | Value::Vector(_) => Slot::Shared(Rc::new(v)),
            v => Slot::Small(v),
        }
    }
}

/// A value read without copying it where it already lives.
enum Held<'a> {
    Param(&'a Value),
    Shared(Rc<Value>),
    Owned(Value),
}

impl std::ops::Deref for Held<'_> {
    type Target = Value;
    fn deref(&self) -> &Value {
        match self {
            Held::Param(v) => v,
            Held::Shared(v) => v,
            Held::Owned(v) => v,
        }
    }
}

struct Interp<'a> {
    prog: &'a Program,
    sizes: &'a dyn Fn(&str) -> Option<i64>,
    /// Current value of every variable; a binding saves the old value and restores it after.
    env: Vec<Slot<'a>>,
    bounded: bool,
    /// `float` products may take TF32 operands (`Options::precision`).
    tf32: bool,
    steps_left: u64,
}

impl<'a> Interp<'a> {
    fn err<T>(&self, at: ExprId, message: impl Into<String>) -> Res<T> {
        self.fail(at, ErrorKind::Failure, message)
    }

    fn fail<T>(&self, at: ExprId, kind: ErrorKind, message: impl Into<String>) -> Res<T> {
        Err(RuntimeError {
            span: self.prog.span(at),
            message: message.into(),
            kind,
        })
    }

    fn step(&mut self, at: ExprId) -> Res<()> {
        match self.steps_left.checked_sub(1) {
            Some(n) => {
                self.steps_left = n;
                Ok(())
            }
            None => self.fail(at, ErrorKind::StepLimit, "the interpreter's step limit was reached"),
        }
    }

    fn set(&mut self, var: VarId, v: Slot<'a>) -> Res<Slot<'a>> {
        match self.env.get_mut(var.index()) {
            Some(slot) => Ok(std::mem::replace(slot, v)),
            None => Err(RuntimeError {
                span: self.prog.span(self.prog.body),
                message: format!("internal error: variable #{} is not declared in the program", var.0),
                kind: ErrorKind::Failure,
            }),
        }
    }

    /// Evaluates `body` with `vars` bound to `vals`, restoring the previous bindings afterwards
    /// (also on error, so one program can be evaluated again after a failure).
    fn bind<T, const K: usize>(
        &mut self,
        vars: &[VarId],
        vals: [Value; K],
        at: ExprId,
        body: impl FnOnce(&mut Self) -> Res<T>,
    ) -> Res<T> {
        if vars.len() != K {
            return self.err(
                at,
                format!(
                    "a function of {} parameter(s) was applied to {K} argument(s)",
                    vars.len()
                ),
            );
        }
        let mut saved: [Slot<'a>; K] = std::array::from_fn(|_| Slot::Unbound);
        for (i, val) in vals.into_iter().enumerate() {
            match self.set(vars[i], Slot::of(val)) {
                Ok(old) => saved[i] = old,
                Err(e) => {
                    self.restore(&vars[..i], saved);
                    return Err(e);
                }
            }
        }
        let r = body(self);
        self.restore(vars, saved);
        r
    }

    fn restore<const K: usize>(&mut self, vars: &[VarId], saved: [Slot<'a>; K]) {
        for (v, old) in vars.iter().zip(saved).rev() {
            let _ = self.set(*v, old);
        }
    }

    /// Applies the lambda node `f` (a primitive's function argument) to `args`.
    fn apply<const K: usize>(&mut self, f: ExprId, args: [Value; K]) -> Res<Value> {
        let prog = self.prog;
        match prog.expr(f) {
            Expr::Lambda { params, body } => self.bind(params, args, f, |s| s.eval(*body)),
            _ => self.err(f, "internal error: a primitive's function argument is not a lambda"),
        }
    }

    fn size(&self, e: &ArithExpr, at: ExprId) -> Res<i64> {
        e.eval(self.sizes)
            .or_else(|err| self.err(at, format!("cannot evaluate the size `{e}`: {err}")))
    }

    /// A size that is used as a count or length: it must fit in a non-negative `usize`.
    fn count(&self, e: &ArithExpr, at: ExprId, what: &str) -> Res<usize> {
        let v = self.size(e, at)?;
        if v < 0 || v > i64::from(i32::MAX) {
            return self.err(at, format!("{what} `{e}` is {v}, which is not a valid size"));
        }
        Ok(v as usize)
    }

    /// A condition: a `bool`, or the `[bool]1` a reduction computes on the device (host
    /// sections branch on those).
    fn truth(&self, v: Value, at: ExprId, what: &str) -> Res<bool> {
        match v {
            Value::Bool(b) => Ok(b),
            Value::Array(xs) if matches!(xs.as_slice(), [Value::Bool(_)]) => Ok(matches!(xs[0], Value::Bool(true))),
            other => self.err(
                at,
                format!("the condition of {what} must be a bool, not {}", describe(&other)),
            ),
        }
    }

    /// The value of a node without copying it when it is a variable.
    fn shared(&mut self, id: ExprId) -> Res<Held<'a>> {
        if let Expr::Var(v) = self.prog.expr(id) {
            return match self.env.get(v.index()) {
                Some(Slot::Param(p)) => Ok(Held::Param(p)),
                Some(Slot::Shared(rc)) => Ok(Held::Shared(rc.clone())),
                Some(Slot::Small(x)) => Ok(Held::Owned(x.clone())),
                _ => self.unbound(*v, id),
            };
        }
        Ok(Held::Owned(self.eval(id)?))
    }

    fn unbound<T>(&self, v: VarId, at: ExprId) -> Res<T> {
        let name = self.prog.vars.get(v.index()).map_or("?", |i| i.name.as_str());
        self.err(
            at,
            format!("internal error: variable `{name}` is used outside its scope"),
        )
    }

    fn eval(&mut self, id: ExprId) -> Res<Value> {
        let prog = self.prog;
        let Some(expr) = prog.exprs.get(id.index()) else {
            return Err(RuntimeError {
                span: Span::default(),
                message: format!("internal error: expression #{} does not exist", id.0),
                kind: ErrorKind::Failure,
            });
        };
        match expr {
            Expr::Var(v) => match self.env.get(v.index()) {
                Some(Slot::Param(p)) => Ok((*p).clone()),
                Some(Slot::Small(x)) => Ok(x.clone()),
                Some(Slot::Shared(rc)) => Ok((**rc).clone()),
                _ => self.unbound(*v, id),
            },
            Expr::Lit(l) => Ok(match l {
                Lit::Float(f) => Value::Float(*f),
                Lit::Double(d) => Value::Double(*d),
                Lit::Int(i) => Value::Int(*i),
                Lit::Uint(u) => Value::Uint(*u),
                Lit::Long(l) => Value::Long(*l),
                Lit::Ulong(u) => Value::Ulong(*u),
                Lit::Bool(b) => Value::Bool(*b),
            }),
            Expr::Lambda { .. } => self.err(id, "a function cannot be used as a value here"),
            Expr::If { cond, then, els } => {
                let c = self.eval(*cond)?;
                if self.truth(c, *cond, "`if`")? {
                    self.eval(*then)
                } else {
                    self.eval(*els)
                }
            }
            Expr::Let { var, value, body, .. } => {
                let v = self.eval(*value)?;
                self.bind(&[*var], [v], id, |s| s.eval(*body))
            }
            Expr::Pack(e) => self.eval(*e),
            Expr::Op { op, args } => {
                self.step(id)?;
                self.op(id, *op, args)
            }
            Expr::Prim { prim, args } => {
                self.step(id)?;
                self.prim(id, prim, args)
            }
        }
    }

    fn args<const K: usize>(&self, id: ExprId, args: &[ExprId], what: &str) -> Res<[ExprId; K]> {
        match <[ExprId; K]>::try_from(args) {
            Ok(a) => Ok(a),
            Err(_) => self.err(
                id,
                format!("internal error: `{what}` has {} argument(s), expected {K}", args.len()),
            ),
        }
    }

    fn array(&mut self, id: ExprId, what: &str) -> Res<Vec<Value>> {
        match self.eval(id)? {
            Value::Array(xs) => Ok(xs),
            other => self.err(id, format!("`{what}` expects an array, not {}", describe(&other))),
        }
    }

    /// Calls `f` on every element of the array `id`, in order, moving the elements out of a
    /// computed array and copying them one at a time out of a variable's.
    fn each(&mut self, id: ExprId, what: &str, mut f: impl FnMut(&mut Self, Value) -> Res<()>) -> Res<usize> {
        match self.shared(id)? {
            Held::Owned(Value::Array(xs)) => {
                let n = xs.len();
                for x in xs {
                    f(self, x)?;
                }
                Ok(n)
            }
            held => match &*held {
                Value::Array(xs) => {
                    for x in xs {
                        f(self, x.clone())?;
                    }
                    Ok(xs.len())
                }
                other => self.err(id, format!("`{what}` expects an array, not {}", describe(other))),
            },
        }
    }

    /// A sequential fold of `f` over the array `xs`, as a one-element array. When `f` is just
    /// the commutative operator `op`, it is applied directly: the same result without a binding
    /// per element, which is most of the time a large reduction takes.
    fn fold(&mut self, f: ExprId, op: Option<Op>, z: Value, xs: ExprId) -> Res<Value> {
        let at = match self.prog.expr(f) {
            Expr::Lambda { body, .. } => *body,
            _ => f,
        };
        let mut acc = Some(z);
        self.each(xs, "reduce", |s, x| {
            let a = acc.take().unwrap_or(Value::Bool(false));
            acc = Some(match op {
                Some(op) => {
                    s.step(at)?;
                    s.lanewise(at, op, &[a, x])?
                }
                None => s.apply(f, [a, x])?,
            });
            Ok(())
        })?;
        Ok(Value::Array(acc.into_iter().collect()))
    }
}

enum Promoted {
    F32(f32, f32),
    F64(f64, f64),
}

/// C's usual arithmetic conversions for two numeric operands, at least one of them floating
/// (two ints are handled before this is called).
fn promote(a: &Value, b: &Value) -> Option<Promoted> {
    use Value::*;
    Some(match (a, b) {
        (Float(a), Float(b)) => Promoted::F32(*a, *b),
        (Float(a), Int(b)) => Promoted::F32(*a, *b as f32),
        (Int(a), Float(b)) => Promoted::F32(*a as f32, *b),
        (Double(a), Double(b)) => Promoted::F64(*a, *b),
        (Double(a), Float(b)) => Promoted::F64(*a, f64::from(*b)),
        (Float(a), Double(b)) => Promoted::F64(f64::from(*a), *b),
        (Double(a), Int(b)) => Promoted::F64(*a, f64::from(*b)),
        (Int(a), Double(b)) => Promoted::F64(f64::from(*a), *b),
        _ => return None,
    })
}

fn compare(op: Op, o: std::cmp::Ordering) -> Option<bool> {
    use std::cmp::Ordering::*;
    Some(match op {
        Op::Lt => o == Less,
        Op::Le => o != Greater,
        Op::Gt => o == Greater,
        Op::Ge => o != Less,
        Op::Eq => o == Equal,
        Op::Ne => o != Equal,
        _ => return None,
    })
}

/// IEEE comparisons: every ordered comparison with NaN is false, `!=` is true.
fn float_compare(op: Op, a: f64, b: f64) -> Option<bool> {
    Some(match op {
        Op::Lt => a < b,
        Op::Le => a <= b,
        Op::Gt => a > b,
        Op::Ge => a >= b,
        Op::Eq => a == b,
        Op::Ne => a != b,
        _ => return None,
    })
}

fn unary_f64(op: Op, a: f64) -> Option<f64> {
    Some(match op {
        Op::Neg => -a,
        Op::Abs => a.abs(),
        Op::Sqrt => a.sqrt(),
        Op::Exp => a.exp(),
        Op::Log => a.ln(),
        Op::Sin => a.sin(),
        Op::Cos => a.cos(),
        _ => return None,
    })
}

fn unary_f32(op: Op, a: f32) -> Option<f32> {
    Some(match op {
        Op::Neg => -a,
        Op::Abs => a.abs(),
        Op::Sqrt => a.sqrt(),
        Op::Exp => a.exp(),
        Op::Log => a.ln(),
        Op::Sin => a.sin(),
        Op::Cos => a.cos(),
        _ => return None,
    })
}

fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Float(_)
            | Value::Double(_)
            | Value::Int(_)
            | Value::Bool(_)
            | Value::Uint(_)
            | Value::Long(_)
            | Value::Ulong(_)
            | Value::Approx(_)
    )
}

/// The OpenCL scalar type of a scalar value, as `describe` names it.
fn scalar_kind(v: &Value) -> &'static str {
    match v {
        Value::Float(_) | Value::Approx(Approx { double: false, .. }) => "float",
        Value::Double(_) | Value::Approx(Approx { double: true, .. }) => "double",
        Value::Int(_) => "int",
        Value::Bool(_) => "bool",
        Value::Uint(_) => "uint",
        Value::Long(_) => "long",
        Value::Ulong(_) => "ulong",
        Value::Vector(_) | Value::Tuple(_) | Value::Array(_) => "",
    }
}

/// A short description of a value's shape for error messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Float(_) | Value::Approx(Approx { double: false, .. }) => "a float".into(),
        Value::Double(_) | Value::Approx(Approx { double: true, .. }) => "a double".into(),
        Value::Int(_) => "an int".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Uint(_) => "a uint".into(),
        Value::Long(_) => "a long".into(),
        Value::Ulong(_) => "a ulong".into(),
        Value::Vector(l) => format!("a vector of {} lanes", l.len()),
        Value::Tuple(c) => format!("a tuple of {} components", c.len()),
        Value::Array(xs) => format!("an array of length {}", xs.len()),
    }
}

/// The JSON spelling of a value that is not finite.
fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

impl Value {
    /// Compact JSON. Arrays, tuples and vectors are JSON arrays. Floats print with Rust's
    /// shortest round-trip digits for their own precision (`0.1f32` prints `0.1`, not
    /// `0.10000000149011612`), always with a `.` or exponent so they read back as floats.
    /// Strict JSON has no NaN or infinity; they print as `NaN`, `Infinity` and `-Infinity`,
    /// which Python's `json` and numpy read back (`null` would lose the value).
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }

    fn write_json(&self, s: &mut String) {
        match self {
            Value::Float(f) if f.is_finite() => {
                let _ = write!(s, "{f:?}");
            }
            Value::Double(d) if d.is_finite() => {
                let _ = write!(s, "{d:?}");
            }
            Value::Approx(a) if a.value.is_finite() => {
                if a.double {
                    let _ = write!(s, "{:?}", a.value);
                } else {
                    let _ = write!(s, "{:?}", a.value as f32);
                }
            }
            Value::Float(f) => s.push_str(non_finite(f64::from(*f))),
            Value::Double(d) => s.push_str(non_finite(*d)),
            Value::Approx(a) => s.push_str(non_finite(a.value)),
            Value::Int(i) => {
                let _ = write!(s, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(s, "{u}");
            }
            Value::Long(l) => {
                let _ = write!(s, "{l}");
            }
            Value::Ulong(u) => {
                let _ = write!(s, "{u}");
            }
            Value::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            Value::Vector(xs) | Value::Tuple(xs) | Value::Array(xs) => {
                s.push('[');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    x.write_json(s);
                }
                s.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests;
