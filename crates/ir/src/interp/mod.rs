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
//! the section "Bounded arithmetic" below).

use crate::diag::Span;
use crate::expr::{Expr, ExprId, Lit, MapKind, Op, Prim, Program, ReduceKind, VarId};
use crate::types::Scalar;
use arith::ArithExpr;
use std::fmt::Write as _;

mod ints;
use std::rc::Rc;

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

    fn prim(&mut self, id: ExprId, prim: &Prim, args: &[ExprId]) -> Res<Value> {
        let name = prim.name();
        let name = name.as_str();
        match prim {
            Prim::Map(MapKind::Vec) => {
                let [f, v] = self.args(id, args, name)?;
                let lanes = match self.eval(v)? {
                    Value::Vector(l) => l,
                    other => return self.err(v, format!("`mapVec` expects a vector, not {}", describe(&other))),
                };
                let mut out = Vec::with_capacity(lanes.len());
                for x in lanes {
                    out.push(self.apply(f, [x])?);
                }
                Ok(Value::Vector(out))
            }
            Prim::Map(_) => {
                let [f, xs] = self.args(id, args, name)?;
                let mut out = vec![];
                self.each(xs, name, |s, x| {
                    out.push(s.apply(f, [x])?);
                    Ok(())
                })?;
                Ok(Value::Array(out))
            }
            Prim::Reduce(kind) => {
                let [f, z, xs] = self.args(id, args, name)?;
                let z = self.eval(z)?;
                let op = self.binary_op_of(f);
                if self.bounded && *kind == ReduceKind::Plain {
                    return self.reduce_any_order(id, f, op, z, xs);
                }
                self.fold(f, op.map(|(o, _)| o), z, xs)
            }
            Prim::Filter(_) => {
                let [p, xs] = self.args(id, args, name)?;
                let mut out = vec![];
                self.each(xs, name, |s, x| match s.apply(p, [x.clone()])? {
                    Value::Bool(true) => {
                        out.push(x);
                        Ok(())
                    }
                    Value::Bool(false) => Ok(()),
                    other => s.err(
                        p,
                        format!("a filter predicate must return a bool, not {}", describe(&other)),
                    ),
                })?;
                Ok(Value::Array(out))
            }
            Prim::Zip => {
                let mut arrays = vec![];
                for a in args {
                    arrays.push(self.array(*a, name)?);
                }
                let n = arrays.first().map_or(0, Vec::len);
                if let Some(bad) = arrays.iter().position(|a| a.len() != n) {
                    return self.err(
                        id,
                        format!(
                            "zip of arrays of different lengths: argument 1 has {n} elements, argument {} has {}",
                            bad + 1,
                            arrays[bad].len()
                        ),
                    );
                }
                let mut iters: Vec<_> = arrays.into_iter().map(Vec::into_iter).collect();
                let out = (0..n)
                    .map(|_| Value::Tuple(iters.iter_mut().filter_map(Iterator::next).collect()))
                    .collect();
                Ok(Value::Array(out))
            }
            Prim::Split(k) => {
                let [xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the chunk size")?;
                let xs = self.array(xs, name)?;
                if k == 0 {
                    return self.err(id, "split #0: the chunk size must be positive");
                }
                if xs.len() % k != 0 {
                    let n = xs.len();
                    return self.err(
                        id,
                        format!("split #{k} of an array of length {n}: {n} is not a multiple of {k}"),
                    );
                }
                let mut it = xs.into_iter();
                Ok(Value::Array(
                    (0..it.len() / k)
                        .map(|_| Value::Array(it.by_ref().take(k).collect()))
                        .collect(),
                ))
            }
            Prim::Join => {
                let [xss] = self.args(id, args, name)?;
                let mut out = vec![];
                for row in self.array(xss, name)? {
                    match row {
                        Value::Array(r) => out.extend(r),
                        other => {
                            return self.err(
                                id,
                                format!(
                                    "`join` expects an array of arrays, found an element that is {}",
                                    describe(&other)
                                ),
                            )
                        }
                    }
                }
                Ok(Value::Array(out))
            }
            Prim::Transpose => {
                let [xss] = self.args(id, args, name)?;
                let rows = self.rows(xss, name)?;
                let m = rows.first().map_or(0, Vec::len);
                if let Some(bad) = rows.iter().position(|r| r.len() != m) {
                    return self.err(
                        id,
                        format!(
                            "transpose of a ragged array: row 0 has {m} elements, row {bad} has {}",
                            rows[bad].len()
                        ),
                    );
                }
                let mut cols: Vec<Vec<Value>> = (0..m).map(|_| Vec::with_capacity(rows.len())).collect();
                for row in rows {
                    for (j, x) in row.into_iter().enumerate() {
                        cols[j].push(x);
                    }
                }
                Ok(Value::Array(cols.into_iter().map(Value::Array).collect()))
            }
            Prim::Slide(s, t) => {
                let [xs] = self.args(id, args, name)?;
                let s = self.count(s, id, "the window size")?;
                let t = self.count(t, id, "the step")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if s == 0 || t == 0 {
                    return self.err(
                        id,
                        format!("slide #{s} #{t}: the window size and the step must be positive"),
                    );
                }
                if n < s {
                    return self.err(
                        id,
                        format!("slide #{s} #{t} of an array of length {n}: the array is shorter than one window"),
                    );
                }
                let windows = (n - s + t) / t;
                Ok(Value::Array(
                    (0..windows)
                        .map(|i| Value::Array(xs[i * t..i * t + s].to_vec()))
                        .collect(),
                ))
            }
            Prim::Pad(l, r) => {
                let [v, xs] = self.args(id, args, name)?;
                let l = self.count(l, id, "the left padding")?;
                let r = self.count(r, id, "the right padding")?;
                let v = self.eval(v)?;
                let xs = self.array(xs, name)?;
                let mut out = Vec::with_capacity(l + xs.len() + r);
                out.extend(std::iter::repeat_n(v.clone(), l));
                out.extend(xs);
                out.extend(std::iter::repeat_n(v, r));
                Ok(Value::Array(out))
            }
            Prim::PadClamp(l, r) => {
                let [xs] = self.args(id, args, name)?;
                let l = self.count(l, id, "the left padding")?;
                let r = self.count(r, id, "the right padding")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if n == 0 {
                    return self.err(id, "pad-clamp of an empty array: there is no element to repeat");
                }
                // Index i of the result reads xs[clamp(i - l, 0, n - 1)].
                let out = (0..l + n + r)
                    .map(|i| xs[i.saturating_sub(l).min(n - 1)].clone())
                    .collect();
                Ok(Value::Array(out))
            }
            Prim::ReorderStride(s) => {
                let [xs] = self.args(id, args, name)?;
                let s = self.count(s, id, "the stride")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if s == 0 || n % s != 0 {
                    return self.err(
                        id,
                        format!("reorder-stride #{s} of an array of length {n}: {n} is not a multiple of {s}"),
                    );
                }
                let m = n / s;
                Ok(Value::Array((0..n).map(|i| xs[i / m + s * (i % m)].clone()).collect()))
            }
            Prim::Reverse => {
                let [xs] = self.args(id, args, name)?;
                let mut xs = self.array(xs, name)?;
                xs.reverse();
                Ok(Value::Array(xs))
            }
            Prim::Generate(n) => {
                let [f] = self.args(id, args, name)?;
                let n = self.count(n, id, "the length")?;
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(self.apply(f, [Value::Int(i as i32)])?);
                }
                Ok(Value::Array(out))
            }
            Prim::Iterate(k) => {
                let [f, xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the iteration count")?;
                let mut v = self.eval(xs)?;
                for _ in 0..k {
                    v = self.apply(f, [v])?;
                }
                Ok(v)
            }
            Prim::IterateUntil(k) => {
                let [c, f, xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the most steps")?;
                let mut v = self.eval(xs)?;
                for _ in 0..k {
                    let next = self.apply(f, [v.clone()])?;
                    let done = self.apply(c, [v, next.clone()])?;
                    v = next;
                    if self.truth(done, c, "`iterate-until`")? {
                        break;
                    }
                }
                Ok(v)
            }
            Prim::AsVector(w) => {
                let [xs] = self.args(id, args, name)?;
                let w = usize::from(*w);
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if w == 0 || n % w != 0 {
                    return self.err(
                        id,
                        format!("asVector #{w} of an array of length {n}: {n} is not a multiple of {w}"),
                    );
                }
                if let Some(x) = xs.iter().find(|x| !is_scalar(x)) {
                    return self.err(
                        id,
                        format!("`asVector` expects an array of scalars, found {}", describe(x)),
                    );
                }
                Ok(Value::Array(xs.chunks(w).map(|c| Value::Vector(c.to_vec())).collect()))
            }
            Prim::AsScalar => {
                let [xs] = self.args(id, args, name)?;
                let mut out = vec![];
                for v in self.array(xs, name)? {
                    match v {
                        Value::Vector(l) => out.extend(l),
                        other => {
                            return self.err(
                                id,
                                format!("`asScalar` expects an array of vectors, found {}", describe(&other)),
                            )
                        }
                    }
                }
                Ok(Value::Array(out))
            }
            Prim::To(_) => {
                let [e] = self.args(id, args, name)?;
                self.eval(e)
            }
        }
    }

    fn rows(&mut self, id: ExprId, what: &str) -> Res<Vec<Vec<Value>>> {
        let mut rows = vec![];
        for r in self.array(id, what)? {
            match r {
                Value::Array(r) => rows.push(r),
                other => {
                    return self.err(
                        id,
                        format!(
                            "`{what}` expects an array of arrays, found an element that is {}",
                            describe(&other)
                        ),
                    )
                }
            }
        }
        Ok(rows)
    }

    /// `args` for an operator, naming it only when there is an error to report.
    fn op_args<const K: usize>(&self, id: ExprId, op: Op, args: &[ExprId]) -> Res<[ExprId; K]> {
        match <[ExprId; K]>::try_from(args) {
            Ok(a) => Ok(a),
            Err(_) => self.args(id, args, &op.name()),
        }
    }

    fn op(&mut self, id: ExprId, op: Op, args: &[ExprId]) -> Res<Value> {
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
    fn lanewise(&self, id: ExprId, op: Op, args: &[Value]) -> Res<Value> {
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
    fn scalar(&self, id: ExprId, op: Op, args: &[Value]) -> Res<Value> {
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

// ---------------------------------------------------------------------------------------------
// Bounded arithmetic (`Arith::Bounded`)
//
// Each `float`/`double` is an interval argument about two numbers: X, the program's value in
// exact real arithmetic (conversions between float types are the identity there), and D, the
// value an OpenCL device computes. `Approx::value` approximates X within `own` (the error of this
// f64 evaluation); `dev` bounds |D - X| for every evaluation that OpenCL C allows for the program:
// each operation rounded as the OpenCL specification's accuracy table permits (correctly rounded
// `+ - * fma`, 2.5 ulp float division, 3 ulp `sqrt exp log`, 4 ulp `sin cos`, 16 ulp `pow`,
// subnormals possibly flushed), `reduceSeq` in its order, `reduce` and `dot` in any order, and
// `a*b+c` possibly contracted to an fma (whose one rounding is within the two roundings charged).
// So for a device result d of any program with the same exact value, |d - value| <= dev + own.
// The propagation rules are the usual first-principles ones (for `a + b`: the operands' errors
// add, then one rounding of at most u times the magnitude of the rounded sum), written out below
// with their derivation where it is not immediate.

/// A `float` or `double` computed by [`Arith::Bounded`] (see the section comment above).
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
const U32: f64 = 1.0 / 16_777_216.0;
const U64: f64 = f64::EPSILON / 2.0;
/// Error of a Rust `f64` math function (`exp`, `sin`, `powf`, ...), generously: 2 ulp.
const LIBM: f64 = 4.0 * U64;
/// Largest error of rounding a result to `f64` near zero (subnormal results).
const TINY64: f64 = 5e-324;
/// Covers the rounding of the bound arithmetic itself.
const SLACK: f64 = 1.0 + 1e-9;

/// Rounds a bound up to `f32`.
fn up(x: f64) -> f32 {
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
struct B {
    v: f64,
    own: f64,
    dev: f64,
    double: bool,
}

impl B {
    fn of(v: &Value) -> Option<B> {
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

    fn exact(v: f64, double: bool) -> B {
        B {
            v,
            own: 0.0,
            dev: 0.0,
            double,
        }
    }

    /// An `int` operand converted as C does: exactly to `double`; to `float` with one rounding
    /// once it has more than 24 significant bits.
    fn int(i: i32, double: bool) -> B {
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

    fn is_exact(&self) -> bool {
        self.own == 0.0 && self.dev == 0.0
    }

    /// Bound on |exact|.
    fn mag(&self) -> f64 {
        self.v.abs() + self.own
    }

    /// Every value that the exact or a device evaluation can have lies in `v ± spread`.
    fn spread(&self) -> f64 {
        self.own + self.dev
    }

    fn unit(&self) -> f64 {
        if self.double {
            U64
        } else {
            U32
        }
    }

    /// Absolute error of one device rounding near zero (a flushed or subnormal result).
    fn tiny(&self) -> f64 {
        if self.double {
            f64::MIN_POSITIVE
        } else {
            f64::from(f32::MIN_POSITIVE)
        }
    }

    /// The value with `own` and `dev` rounded up; no bound where it is not finite, or where the
    /// device type could overflow.
    fn done(self) -> Value {
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
fn gamma(m: f64, u: f64) -> f64 {
    if m * u < 0.5 {
        m * u / (1.0 - m * u)
    } else {
        f64::INFINITY
    }
}

/// Worst-case ulps of an OpenCL operation (OpenCL 1.2, tables 7.1 and 7.2); 0.5 is correctly
/// rounded.
fn ulps(op: Op, double: bool) -> f64 {
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
struct AnyOrderSum {
    v: f64,
    own: f64,
    /// Sum of the terms' device errors and of their magnitudes as the device may see them.
    dev: f64,
    mag: f64,
    n: f64,
    double: bool,
}

impl AnyOrderSum {
    fn new() -> AnyOrderSum {
        AnyOrderSum {
            v: 0.0,
            own: 0.0,
            dev: 0.0,
            mag: 0.0,
            n: 0.0,
            double: false,
        }
    }

    fn add(&mut self, t: B) {
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
    fn done(self) -> Value {
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
enum ReduceOp {
    /// `+`: the bound depends on the order; [`AnyOrderSum`] covers all of them.
    Sum,
    /// `*`, `min`, `max`: the sequential bound covers every order (the relative errors of a
    /// product multiply whatever the tree; `min`/`max` do not round).
    OrderFree,
}

impl<'a> Interp<'a> {
    /// The operator of `(lambda (a b) (op a b))` (or `(op b a)`), when it is commutative and
    /// one that [`Interp::reduce_any_order`] knows how to bound in every order.
    fn binary_op_of(&self, f: ExprId) -> Option<(Op, ReduceOp)> {
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
    fn reduce_any_order(
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
    fn sum_any_order(&self, id: ExprId, terms: Vec<Value>) -> Res<Value> {
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
    fn bounded_scalar(&self, id: ExprId, op: Op, args: &[Value]) -> Option<Res<Value>> {
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
            (_, [a, b]) => binary(op, num(a)?, num(b)?)?,
            (Op::Fma, [a, b, c]) => {
                let (a, b, c) = (num(a)?, num(b)?, num(c)?);
                let (_, p_own, p_dev) = product(a, b);
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

/// Propagated errors of `a * b`: (value, own error before rounding, device error before rounding).
/// |Xa Xb - va vb| <= |va| ownb + |vb| owna + owna ownb, and likewise for the device with |X|.
fn product(a: B, b: B) -> (f64, f64, f64) {
    let p_own = a.v.abs() * b.own + b.v.abs() * a.own + a.own * b.own;
    let p_dev = a.mag() * b.dev + b.mag() * a.dev + a.dev * b.dev;
    (a.v * b.v, p_own, p_dev)
}

fn binary(op: Op, a: B, b: B) -> Option<Value> {
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
            (v, p_own + U64 * v.abs() + TINY64, p_dev)
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

fn unary(op: Op, a: B) -> Value {
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
fn certain_compare(op: Op, a: B, b: B) -> Option<bool> {
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
fn without_dev_bound(v: Value) -> Value {
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

#[cfg(test)]
mod tests;
