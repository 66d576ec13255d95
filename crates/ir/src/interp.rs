//! Reference interpreter: the oracle that every compiled program is checked against.
//!
//! It gives every primitive its high-level meaning (all the `map` flavours are `map`, `toX` is
//! the identity, ...), so a program means the same before and after any rewrite. It is written
//! to be obviously right rather than fast, with two exceptions that keep it usable on real
//! inputs: variables are shared (`Rc`) so reading `(at i xs)` inside a per-element lambda does
//! not copy `xs`, and iteration (map, reduce, iterate, ...) is a loop, so the Rust stack only
//! grows with the nesting depth of the program, never with array lengths.
//!
//! Scalar operators follow OpenCL C: `float` arithmetic is done in `f32`, `int` arithmetic wraps
//! (signed overflow is undefined in OpenCL; wrapping is what the hardware does), integer `/` and
//! `%` truncate toward zero and fail on a zero divisor, `%` on floats is `fmod`. Operands of
//! different scalar types meet by C's usual arithmetic conversions (`int` < `float` < `double`).
//! `and`/`or` on scalar operands short-circuit as C's `&&`/`||` do, which matters when the right
//! operand would fail (an `at` guarded by a bounds test).

use crate::diag::Span;
use crate::expr::{Expr, ExprId, Lit, MapKind, Op, Prim, Program, VarId};
use arith::ArithExpr;
use std::fmt::Write as _;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(f32),
    Double(f64),
    Int(i32),
    Bool(bool),
    /// Lanes of an OpenCL vector, all of one scalar kind.
    Vector(Vec<Value>),
    Tuple(Vec<Value>),
    /// Also existential arrays: their run-time length is the `Vec`'s length.
    Array(Vec<Value>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub span: Span,
    pub message: String,
}

/// Runs `prog` on `args` (one per parameter, in order); `sizes` gives the size variables.
pub fn eval(prog: &Program, args: &[Value], sizes: &dyn Fn(&str) -> Option<i64>) -> Result<Value, RuntimeError> {
    if args.len() != prog.params.len() {
        return Err(RuntimeError {
            span: prog.span(prog.body),
            message: format!(
                "the program takes {} argument(s) but {} were given",
                prog.params.len(),
                args.len()
            ),
        });
    }
    let mut it = Interp {
        prog,
        sizes,
        env: vec![None; prog.vars.len()],
    };
    for (p, a) in prog.params.iter().zip(args) {
        it.set(p.var, Some(Rc::new(a.clone())))?;
    }
    it.eval(prog.body)
}

type Res<T> = Result<T, RuntimeError>;

struct Interp<'a> {
    prog: &'a Program,
    sizes: &'a dyn Fn(&str) -> Option<i64>,
    /// Current value of every variable; a binding saves the old value and restores it after.
    env: Vec<Option<Rc<Value>>>,
}

impl Interp<'_> {
    fn err<T>(&self, at: ExprId, message: impl Into<String>) -> Res<T> {
        Err(RuntimeError {
            span: self.prog.span(at),
            message: message.into(),
        })
    }

    fn set(&mut self, var: VarId, v: Option<Rc<Value>>) -> Res<Option<Rc<Value>>> {
        match self.env.get_mut(var.index()) {
            Some(slot) => Ok(std::mem::replace(slot, v)),
            None => Err(RuntimeError {
                span: self.prog.span(self.prog.body),
                message: format!("internal error: variable #{} is not declared in the program", var.0),
            }),
        }
    }

    /// Evaluates `body` with `vars` bound to `vals`, restoring the previous bindings afterwards
    /// (also on error, so one program can be evaluated again after a failure).
    fn bind<T>(
        &mut self,
        vars: &[VarId],
        vals: Vec<Value>,
        at: ExprId,
        body: impl FnOnce(&mut Self) -> Res<T>,
    ) -> Res<T> {
        if vars.len() != vals.len() {
            return self.err(
                at,
                format!(
                    "a function of {} parameter(s) was applied to {} argument(s)",
                    vars.len(),
                    vals.len()
                ),
            );
        }
        let mut saved = Vec::with_capacity(vars.len());
        for (v, val) in vars.iter().zip(vals) {
            match self.set(*v, Some(Rc::new(val))) {
                Ok(old) => saved.push((*v, old)),
                Err(e) => {
                    self.restore(saved);
                    return Err(e);
                }
            }
        }
        let r = body(self);
        self.restore(saved);
        r
    }

    fn restore(&mut self, saved: Vec<(VarId, Option<Rc<Value>>)>) {
        for (v, old) in saved.into_iter().rev() {
            let _ = self.set(v, old);
        }
    }

    /// Applies the lambda node `f` (a primitive's function argument) to `args`.
    fn apply(&mut self, f: ExprId, args: Vec<Value>) -> Res<Value> {
        match self.prog.expr(f) {
            Expr::Lambda { params, body } => {
                let body = *body;
                self.bind(&params.clone(), args, f, |s| s.eval(body))
            }
            _ => self.err(f, "internal error: a primitive's function argument is not a lambda"),
        }
    }

    fn size(&self, e: &ArithExpr, at: ExprId) -> Res<i64> {
        e.eval(self.sizes)
            .or_else(|err| self.err(at, format!("cannot evaluate the size `{e}`: {err:?}")))
    }

    /// A size that is used as a count or length: it must fit in a non-negative `usize`.
    fn count(&self, e: &ArithExpr, at: ExprId, what: &str) -> Res<usize> {
        let v = self.size(e, at)?;
        if v < 0 || v > i64::from(i32::MAX) {
            return self.err(at, format!("{what} `{e}` is {v}, which is not a valid size"));
        }
        Ok(v as usize)
    }

    /// The value of a node without copying it when it is a variable.
    fn shared(&mut self, id: ExprId) -> Res<Rc<Value>> {
        if let Expr::Var(v) = self.prog.expr(id) {
            return self.var(*v, id);
        }
        Ok(Rc::new(self.eval(id)?))
    }

    fn var(&self, v: VarId, at: ExprId) -> Res<Rc<Value>> {
        match self.env.get(v.index()) {
            Some(Some(val)) => Ok(val.clone()),
            _ => {
                let name = self.prog.vars.get(v.index()).map_or("?", |i| i.name.as_str());
                self.err(
                    at,
                    format!("internal error: variable `{name}` is used outside its scope"),
                )
            }
        }
    }

    fn eval(&mut self, id: ExprId) -> Res<Value> {
        let Some(expr) = self.prog.exprs.get(id.index()) else {
            return Err(RuntimeError {
                span: Span::default(),
                message: format!("internal error: expression #{} does not exist", id.0),
            });
        };
        match expr {
            Expr::Var(v) => Ok((*self.var(*v, id)?).clone()),
            Expr::Lit(l) => Ok(match l {
                Lit::Float(f) => Value::Float(*f),
                Lit::Double(d) => Value::Double(*d),
                Lit::Int(i) => Value::Int(*i),
                Lit::Bool(b) => Value::Bool(*b),
            }),
            Expr::Lambda { .. } => self.err(id, "a function cannot be used as a value here"),
            Expr::If { cond, then, els } => {
                let (then, els) = (*then, *els);
                match self.eval(*cond)? {
                    Value::Bool(true) => self.eval(then),
                    Value::Bool(false) => self.eval(els),
                    other => self.err(
                        *cond,
                        format!("the condition of `if` must be a bool, not {}", describe(&other)),
                    ),
                }
            }
            Expr::Let { var, value, body, .. } => {
                let (var, body) = (*var, *body);
                let v = self.eval(*value)?;
                self.bind(&[var], vec![v], id, |s| s.eval(body))
            }
            Expr::Pack(e) => self.eval(*e),
            Expr::Op { op, args } => self.op(id, *op, args),
            Expr::Prim { prim, args } => self.prim(id, prim, args),
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
                    out.push(self.apply(f, vec![x])?);
                }
                Ok(Value::Vector(out))
            }
            Prim::Map(_) => {
                let [f, xs] = self.args(id, args, name)?;
                let xs = self.array(xs, name)?;
                let mut out = Vec::with_capacity(xs.len());
                for x in xs {
                    out.push(self.apply(f, vec![x])?);
                }
                Ok(Value::Array(out))
            }
            Prim::Reduce(_) => {
                let [f, z, xs] = self.args(id, args, name)?;
                let mut acc = self.eval(z)?;
                for x in self.array(xs, name)? {
                    acc = self.apply(f, vec![acc, x])?;
                }
                Ok(Value::Array(vec![acc]))
            }
            Prim::Filter(_) => {
                let [p, xs] = self.args(id, args, name)?;
                let mut out = vec![];
                for x in self.array(xs, name)? {
                    match self.apply(p, vec![x.clone()])? {
                        Value::Bool(true) => out.push(x),
                        Value::Bool(false) => {}
                        other => {
                            return self.err(
                                p,
                                format!("a filter predicate must return a bool, not {}", describe(&other)),
                            )
                        }
                    }
                }
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
                Ok(Value::Array(xs.chunks(k).map(|c| Value::Array(c.to_vec())).collect()))
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
                    out.push(self.apply(f, vec![Value::Int(i as i32)])?);
                }
                Ok(Value::Array(out))
            }
            Prim::Iterate(k) => {
                let [f, xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the iteration count")?;
                let mut v = self.eval(xs)?;
                for _ in 0..k {
                    v = self.apply(f, vec![v])?;
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

    fn op(&mut self, id: ExprId, op: Op, args: &[ExprId]) -> Res<Value> {
        let name = op.name();
        match op {
            Op::And | Op::Or => {
                let [a, b] = self.args(id, args, &name)?;
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
                if let Some(v) = vs
                    .iter()
                    .find(|v| std::mem::discriminant(*v) != std::mem::discriminant(&vs[0]))
                {
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
                let [t] = self.args(id, args, &name)?;
                match &*self.shared(t)? {
                    Value::Tuple(cs) => match cs.get(usize::from(i)) {
                        Some(c) => Ok(c.clone()),
                        None => self.err(id, format!("`get #{i}` of a tuple of {} components", cs.len())),
                    },
                    other => self.err(id, format!("`get` expects a tuple, not {}", describe(other))),
                }
            }
            Op::VGet(i) => {
                let [v] = self.args(id, args, &name)?;
                match &*self.shared(v)? {
                    Value::Vector(ls) => match ls.get(usize::from(i)) {
                        Some(c) => Ok(c.clone()),
                        None => self.err(id, format!("`vget #{i}` of a vector of {} lanes", ls.len())),
                    },
                    other => self.err(id, format!("`vget` expects a vector, not {}", describe(other))),
                }
            }
            Op::At => {
                let [i, xs] = self.args(id, args, &name)?;
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
                let mut sum: Option<Value> = None;
                for (x, y) in a.into_iter().zip(b) {
                    let p = self.scalar(id, Op::Mul, &[x, y])?;
                    sum = Some(match sum {
                        None => p,
                        Some(s) => self.scalar(id, Op::Add, &[s, p])?,
                    });
                }
                let Some(sum) = sum else {
                    return self.err(id, format!("`{name}` of an empty vector"));
                };
                if !matches!(sum, Value::Float(_) | Value::Double(_)) {
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
            _ => {
                let mut vs = Vec::with_capacity(args.len());
                for a in args {
                    vs.push(self.eval(*a)?);
                }
                self.lanewise(id, op, &vs)
            }
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
            // Truncation toward zero as a C cast; out of range saturates and NaN gives 0 (what
            // Rust's `as` and NVIDIA's cvt.rzi do; C leaves it undefined).
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
    matches!(v, Value::Float(_) | Value::Double(_) | Value::Int(_) | Value::Bool(_))
}

/// A short description of a value's shape for error messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Float(_) => "a float".into(),
        Value::Double(_) => "a double".into(),
        Value::Int(_) => "an int".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Vector(l) => format!("a vector of {} lanes", l.len()),
        Value::Tuple(c) => format!("a tuple of {} components", c.len()),
        Value::Array(xs) => format!("an array of length {}", xs.len()),
    }
}

impl Value {
    /// Compact JSON. Arrays, tuples and vectors are JSON arrays. Floats print with Rust's
    /// shortest round-trip digits for their own precision (`0.1f32` prints `0.1`, not
    /// `0.10000000149011612`), always with a `.` or exponent so they read back as floats.
    /// JSON has no NaN or infinity, so those print as `null`.
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
            Value::Float(_) | Value::Double(_) => s.push_str("null"),
            Value::Int(i) => {
                let _ = write!(s, "{i}");
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
#[path = "interp_tests.rs"]
mod tests;
