//! Type reconstruction for LIFT programs, with symbolic array lengths and existential arrays.
//!
//! Input: a `Program` from `ir::parse` (primitives fully applied, possibly-existential arguments
//! K-normalized into `let`s). Output: a `TypeInfo` side table; the program is never changed.
//!
//! Algorithm: one recursive pass that generates the typing constraints of each primitive and
//! solves them as it goes. Data arguments are typed before function arguments, so a lambda's
//! parameter types are always known when its body is checked and every length constraint is an
//! equation between known `ArithExpr`s, decided by the size library's canonical forms.
//! Constraints that depend on run-time sizes (`split #2` of `N` needs `N % 2 = 0`) are collected
//! in `TypeInfo::checks` and verified once the sizes are known.
//!
//! Existential types follow the thesis (§4.2): every binder of an existential value (`let`,
//! `unpack`, a lambda parameter) unpacks it, giving its length a fresh rigid variable `Xk`; if
//! the binder's body has type `[T]L` with `Xk` in `L` only, the body is packed back into
//! `{∃X. [T]X}` (recorded in `packs`); any other escape of `Xk` is an error.
//!
//! The lengths the checker invents (`Xk`, and `Lk` for `iterate` bodies) are variables of their
//! own `arith::VarKind`, so they never equal a size the user declared with the same spelling,
//! and their names skip the program's size names so that messages and every name-keyed table
//! stay unambiguous.
//!
//! Exact and floor division are one notion: a run-time check `d | e` (from `split #d`,
//! `asVector`, ...) is a fact, and lengths are compared after reading every `e / d` under the
//! facts as exact (`ArithExpr::assume_divisible`), so the user's `(/ N 2)` equals the length of
//! `split #2` and `(* (/ N 2) 2)` equals `N` after `join`. All recorded types are normalised
//! that way once typing is done.

use arith::{ArithExpr, VarKind};
use ir::{
    distinct_lengths, distinct_texts, Diagnostic, Expr, ExprId, LetKind, MapKind, Op, Prim, Program, ReduceKind,
    Scalar, Span, Type, VarId,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

type Result<T> = std::result::Result<T, Diagnostic>;

/// Most steps of an `iterate` whose function changes the length (each step is typed, and
/// generated, on its own).
pub const MAX_ITERATE: i64 = 64;

/// Most values (scalars; a vector counts its lanes, a tuple its members) one private array may
/// hold. Private arrays are registers where they are indexed by constants, else a work-item's
/// own stack (off-chip on GPUs): beyond a few KiB per work-item they only spill, and on a CPU
/// driver every work-item of a group keeps its copy. `validate` refuses a larger `toPrivate`
/// (also when built-in sizes make its length a constant) with the advice to use local or
/// global memory, and the code generator keeps larger temporaries in global memory.
pub const MAX_PRIVATE_VALUES: i64 = 1024;

/// Most steps of a `mapSeqUnroll`/`reduceSeqUnroll`: the code generator writes the body once
/// per step, so a length that built-in sizes make large (`M = 10^6`) would make a kernel
/// source of that many copies.
pub const MAX_UNROLLED_STEPS: i64 = 1024;

/// How many scalars a value of `t` holds in private memory (a vector its lanes, a tuple the
/// sum of its members', an array its length times its element's); `None` when a length is not
/// a constant (or the count overflows).
pub fn private_values(t: &Type) -> Option<i64> {
    match t {
        Type::Scalar(_) => Some(1),
        Type::Vector(_, w) => Some(i64::from(*w)),
        Type::Tuple(cs) => cs.iter().try_fold(0i64, |a, c| a.checked_add(private_values(c)?)),
        Type::Array(el, n) => private_values(el)?.checked_mul(n.as_cst().filter(|n| *n >= 0)?),
        Type::Exists(_) | Type::Fun(..) => None,
    }
}

/// A condition on run-time sizes that typing could not decide symbolically.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCheck {
    pub span: Span,
    pub kind: CheckKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CheckKind {
    /// `len` must be a multiple of `by`; `what` names the primitive (e.g. "split #3").
    Divisible {
        len: ArithExpr,
        by: ArithExpr,
        what: String,
    },
    /// `len >= min`.
    AtLeast {
        len: ArithExpr,
        min: ArithExpr,
        what: String,
    },
    /// `len` evaluates without overflowing 64 bits (every compound length of the program has
    /// one, so that no later stage meets an overflow; not shown by `render`).
    Fits { len: ArithExpr },
}

impl SizeCheck {
    /// Evaluates the check; `Err` holds the user-facing message.
    pub fn verify(&self, sizes: &dyn Fn(&str) -> Option<i64>) -> std::result::Result<(), String> {
        match &self.kind {
            CheckKind::Divisible { len, by, what } => {
                let (Ok(l), Ok(b)) = (len.eval(sizes), by.eval(sizes)) else {
                    return Ok(());
                };
                if b == 0 || l % b != 0 {
                    let shown = if len.as_cst().is_some() {
                        String::new()
                    } else {
                        format!(" ({len})")
                    };
                    return Err(format!(
                        "{what} of an array of length {l}{shown}: {l} is not a multiple of {b}"
                    ));
                }
            }
            CheckKind::Fits { len } => {
                if let Err(arith::EvalError::Overflow) = len.eval(sizes) {
                    return Err(format!("the length {len} does not fit a 64-bit integer"));
                }
            }
            CheckKind::AtLeast { len, min, what } => {
                let (Ok(l), Ok(m)) = (len.eval(sizes), min.eval(sizes)) else {
                    return Ok(());
                };
                if l < m {
                    let shown = if len.as_cst().is_some() {
                        String::new()
                    } else {
                        format!(" ({len})")
                    };
                    return Err(format!(
                        "{what} needs an array of length at least {m}, but it has length {l}{shown}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Types of every node and variable, and where existentials are unpacked and packed.
#[derive(Clone, Debug, Default)]
pub struct TypeInfo {
    pub types: Vec<Option<Type>>,
    pub var_types: Vec<Option<Type>>,
    /// Binders that unpack an existential: the `let` node, or the lambda node and parameter
    /// index, with the fresh length variable.
    pub unpacks: BTreeMap<Binder, String>,
    /// Expressions whose value is packed into an existential by their binder.
    pub packs: BTreeSet<ExprId>,
    pub checks: Vec<SizeCheck>,
    /// Length variables of `iterate` bodies, in creation order (typed symbolically per step).
    pub iter_vars: Vec<String>,
    pub result: Option<Type>,
    /// Parameters holding a filter result (a host unit reading a loop's state, `lift::host`):
    /// the parameter's index and the length variable it is unpacked with.
    pub param_unpacks: BTreeMap<usize, String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Binder {
    Let(ExprId),
    Param(ExprId, usize),
}

impl TypeInfo {
    pub fn ty(&self, e: ExprId) -> &Type {
        self.types[e.index()].as_ref().expect("every reachable node is typed")
    }
    pub fn var_ty(&self, v: VarId) -> &Type {
        self.var_types[v.index()]
            .as_ref()
            .expect("every bound variable is typed")
    }
    pub fn result(&self) -> &Type {
        self.result.as_ref().expect("typed program has a result")
    }
    /// The typed program: one node per line with its type, unpack and pack points marked.
    pub fn render(&self, prog: &Program) -> String {
        let names = ir::print::var_names(prog);
        let mut out = ir::print::tree(prog, &|id| {
            let mut s = String::new();
            if let Expr::Lambda { params, .. } = prog.expr(id) {
                let ps: Vec<String> = params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let x = self
                            .unpacks
                            .get(&Binder::Param(id, i))
                            .map(|x| format!(", unpacked with length {x}"))
                            .unwrap_or_default();
                        format!("{} : {}{x}", names[p.index()], self.var_ty(*p))
                    })
                    .collect();
                let _ = write!(s, "  [{}]", ps.join("; "));
            }
            if let Some(t) = &self.types[id.index()] {
                let _ = write!(s, " : {t}");
            }
            if let Some(x) = self.unpacks.get(&Binder::Let(id)) {
                if let Expr::Let { var, .. } = prog.expr(id) {
                    let _ = write!(s, "  (unpack: {} : {})", names[var.index()], self.var_ty(*var));
                    let _ = x;
                }
            }
            if self.packs.contains(&id) {
                s.push_str("  (packed)");
            }
            s
        });
        let _ = writeln!(out, "result : {}", self.result());
        for c in &self.checks {
            let _ = match &c.kind {
                CheckKind::Divisible { len, by, what } => writeln!(out, "check : {len} % {by} = 0  ({what})"),
                CheckKind::AtLeast { len, min, what } => writeln!(out, "check : {len} >= {min}  ({what})"),
                CheckKind::Fits { .. } => Ok(()),
            };
        }
        out
    }
}

/// Types a whole program.
pub fn infer(prog: &Program) -> Result<TypeInfo> {
    let mut cx = Checker {
        prog,
        info: TypeInfo {
            types: vec![None; prog.exprs.len()],
            var_types: vec![None; prog.vars.len()],
            ..TypeInfo::default()
        },
        n_exist: 0,
        n_iter: 0,
        host: ir::host::host_level(prog),
    };
    for (k, p) in prog.params.iter().enumerate() {
        let ty = match &p.ty {
            // Written by no user (the reader has no such type): the driver's units over a host
            // loop's state. The parameter is unpacked like a binder.
            Type::Exists(elem) if !elem.has_existential() => {
                let (x, len) = cx.fresh_exist();
                cx.info.param_unpacks.insert(k, x);
                Type::array((**elem).clone(), len)
            }
            t if t.has_existential() => {
                return Err(Diagnostic::new(p.ty_span, "parameter types cannot be existential"));
            }
            t => t.clone(),
        };
        cx.info.var_types[p.var.index()] = Some(ty);
    }
    let mut t = cx.infer(prog.body)?;
    let xs: Vec<String> = cx.info.param_unpacks.values().cloned().collect();
    for x in xs {
        t = cx.pack_if_needed(prog.body, t, &x, prog.span(prog.body))?;
    }
    if let Some(x) = cx.escaping_exist(&t) {
        return Err(Diagnostic::new(
            prog.span(prog.body),
            format!("the program's result type {t} mentions the run-time length {x}"),
        ));
    }
    if let Type::Fun(..) = t {
        return Err(Diagnostic::new(
            prog.span(prog.body),
            "the program's result is a function; apply it to its arguments",
        ));
    }
    cx.info.result = Some(t);
    cx.normalise_all();
    cx.lengths_fit()?;
    Ok(cx.info)
}

struct Checker<'a> {
    prog: &'a Program,
    info: TypeInfo,
    n_exist: usize,
    n_iter: usize,
    /// Nodes at host level (`ir::host`): there `if` may select arrays and branch on `[bool]1`.
    host: Vec<bool>,
}

fn has_exist_var(l: &ArithExpr) -> bool {
    !l.free_vars_of_kind(VarKind::Existential).is_empty()
}

impl Checker<'_> {
    fn span(&self, e: ExprId) -> Span {
        self.prog.span(e)
    }

    fn set(&mut self, e: ExprId, t: Type) -> Type {
        self.info.types[e.index()] = Some(t.clone());
        t
    }

    fn escaping_exist(&self, t: &Type) -> Option<String> {
        let mut found = None;
        walk_lengths(t, &mut |l| {
            if found.is_none() {
                found = l.free_vars_of_kind(VarKind::Existential).into_iter().next();
            }
        });
        found
    }

    /// A name `{prefix}k` for a generated length, skipping the program's size names.
    fn fresh_name(&self, prefix: &str, k: &mut usize) -> String {
        loop {
            *k += 1;
            let name = format!("{prefix}{k}");
            if !self.prog.sizes.contains(&name) {
                return name;
            }
        }
    }

    fn fresh_exist(&mut self) -> (String, ArithExpr) {
        let mut k = self.n_exist;
        let x = self.fresh_name("X", &mut k);
        self.n_exist = k;
        let len = ArithExpr::size_var_of_kind(VarKind::Existential, &x);
        (x, len)
    }

    /// Facts `by | len` from the run-time divisibility checks recorded so far.
    fn facts(&self) -> Vec<(ArithExpr, ArithExpr)> {
        self.info
            .checks
            .iter()
            .filter_map(|c| match &c.kind {
                CheckKind::Divisible { len, by, .. } => Some((len.clone(), by.clone())),
                CheckKind::AtLeast { .. } | CheckKind::Fits { .. } => None,
            })
            .collect()
    }

    /// `t` with its lengths read under the divisibility facts.
    fn norm(&self, t: &Type) -> Type {
        let facts = self.facts();
        if facts.is_empty() {
            return t.clone();
        }
        t.map_lengths(&|n| n.assume_divisible(&facts))
    }

    fn norm_len(&self, n: &ArithExpr) -> ArithExpr {
        n.assume_divisible(&self.facts())
    }

    /// Type equality under the divisibility facts.
    fn same(&self, a: &Type, b: &Type) -> bool {
        a == b || self.norm(a) == self.norm(b)
    }

    /// A `Fits` check for every distinct compound length over the program's sizes (bare size
    /// variables fit by construction; run-time and iterate lengths are evaluated elsewhere).
    fn lengths_fit(&mut self) -> Result<()> {
        let mut seen = BTreeSet::new();
        let mut found = vec![];
        for (i, t) in self.info.types.iter().enumerate() {
            let Some(t) = t else { continue };
            walk_lengths(t, &mut |l| {
                let generated = [VarKind::Existential, VarKind::Iterate, VarKind::Generated]
                    .iter()
                    .any(|k| !l.free_vars_of_kind(*k).is_empty());
                if may_overflow(l) && !generated && seen.insert(l.clone()) {
                    found.push((ExprId(i as u32), l.clone()));
                }
            });
        }
        for (e, len) in found {
            let span = self.span(e);
            self.check(span, CheckKind::Fits { len })?;
        }
        Ok(())
    }

    /// Rewrites every recorded type under all the facts, so that later stages compare lengths
    /// structurally.
    fn normalise_all(&mut self) {
        let facts = self.facts();
        if facts.is_empty() {
            return;
        }
        let f = |n: &ArithExpr| n.assume_divisible(&facts);
        for t in self
            .info
            .types
            .iter_mut()
            .chain(self.info.var_types.iter_mut())
            .flatten()
        {
            *t = t.map_lengths(&f);
        }
        if let Some(r) = &mut self.info.result {
            *r = r.map_lengths(&f);
        }
    }

    fn infer(&mut self, e: ExprId) -> Result<Type> {
        let t = match self.prog.expr(e) {
            Expr::Var(v) => match &self.info.var_types[v.index()] {
                Some(t) => t.clone(),
                None => {
                    return Err(Diagnostic::new(
                        self.span(e),
                        "internal: variable used before its binding was typed",
                    ))
                }
            },
            Expr::Lit(l) => Type::Scalar(match l {
                ir::Lit::Float(_) => Scalar::Float,
                ir::Lit::Double(_) => Scalar::Double,
                ir::Lit::Int(_) => Scalar::Int,
                ir::Lit::Bool(_) => Scalar::Bool,
                ir::Lit::Uint(_) => Scalar::Uint,
                ir::Lit::Long(_) => Scalar::Long,
                ir::Lit::Ulong(_) => Scalar::Ulong,
            }),
            Expr::Lambda { .. } => {
                return Err(Diagnostic::new(
                    self.span(e),
                    "a function cannot be used as a value here",
                ));
            }
            Expr::Let { kind, var, value, body } => {
                let (kind, var, value, body) = (*kind, *var, *value, *body);
                let tv = self.infer(value)?;
                let x = match (&tv, kind) {
                    (Type::Exists(elem), _) => {
                        let (x, len) = self.fresh_exist();
                        self.info.var_types[var.index()] = Some(Type::array((**elem).clone(), len));
                        self.info.unpacks.insert(Binder::Let(e), x.clone());
                        Some(x)
                    }
                    (_, LetKind::Unpack) => {
                        return Err(Diagnostic::new(
                            self.span(value),
                            format!("`unpack` needs an existential array (a filter result), but this has type {tv}"),
                        )
                        .with_note("use `let` to bind other values"));
                    }
                    (_, LetKind::Let) => {
                        self.info.var_types[var.index()] = Some(tv.clone());
                        None
                    }
                };
                let tb = self.infer(body)?;
                match x {
                    Some(x) => self.pack_if_needed(body, tb, &x, self.span(e))?,
                    None => tb,
                }
            }
            Expr::Pack(inner) => {
                let inner = *inner;
                match self.infer(inner)? {
                    Type::Array(elem, _) if self.escaping_exist(&elem).is_none() => Type::Exists(elem),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(e),
                            format!("`pack` needs an array whose elements have a known size, but this has type {t}"),
                        ))
                    }
                }
            }
            Expr::If { cond, then, els } => {
                let (cond, then, els) = (*cond, *then, *els);
                let tc = self.infer(cond)?;
                let host = self.host[e.index()];
                if tc != Type::bool() && !(host && self.is_bool1(&tc)) {
                    return Err(Diagnostic::new(
                        self.span(cond),
                        format!("the condition of `if` must be bool, but it is {tc}"),
                    ));
                }
                let ta = self.infer(then)?;
                let tb = self.infer(els)?;
                // At host level an array branch beside a filter result is packed, as a binder
                // would pack it (the driver gives it a length buffer).
                let packed = match (&ta, &tb) {
                    (Type::Exists(e), Type::Array(a, _)) | (Type::Array(a, _), Type::Exists(e))
                        if host && self.same(e, a) =>
                    {
                        Some(Type::Exists(e.clone()))
                    }
                    _ => None,
                };
                let (ta, tb) = match packed {
                    Some(t) => (t.clone(), t),
                    None => (ta, tb),
                };
                if !self.same(&ta, &tb) {
                    let (a, b) = distinct_texts(&ta, &tb);
                    return Err(Diagnostic::new(
                        self.span(e),
                        format!("the branches of `if` have different types: {a} and {b}"),
                    ));
                }
                match &ta {
                    Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) => {}
                    // At host level an `if` chooses which kernels run next.
                    Type::Array(..) | Type::Exists(_) if host => {}
                    Type::Array(..) | Type::Exists(_) | Type::Fun(..) => {
                        return Err(Diagnostic::new(
                            self.span(e),
                            format!("`if` selects between scalars, tuples or vectors, not {ta}"),
                        ));
                    }
                }
                ta
            }
            Expr::Op { op, args } => {
                let (op, args) = (*op, args.clone());
                let mut ts = vec![];
                for a in &args {
                    ts.push(self.infer(*a)?);
                }
                self.op(e, op, &args, &ts)?
            }
            Expr::Prim { prim, args } => {
                let (prim, args) = (prim.clone(), args.clone());
                self.prim(e, &prim, &args)?
            }
        };
        Ok(self.set(e, t))
    }

    /// Packs `[T]L(x)` into `{∃X. [T]X}`; any other mention of `x` in the type is an escape.
    fn pack_if_needed(&mut self, body: ExprId, t: Type, x: &str, span: Span) -> Result<Type> {
        if !t.mentions(x) {
            return Ok(t);
        }
        if let Type::Array(elem, _) = &t {
            if !elem.mentions(x) {
                self.info.packs.insert(body);
                return Ok(Type::Exists(elem.clone()));
            }
        }
        Err(Diagnostic::new(
            span,
            format!("the run-time length {x} escapes its `unpack`: the body has type {t}"),
        )
        .with_label("unpacked here")
        .with_note(format!(
            "{x} is the length of a filter result, known only inside this binding"
        ))
        .with_note(
            "only an array of length depending on it can be packed back; reduce it or keep it as the outermost array",
        ))
    }

    /// Types a lambda against known parameter types; returns its result type.
    fn lambda(&mut self, f: ExprId, params: &[Type]) -> Result<Type> {
        let Expr::Lambda { params: vars, body } = self.prog.expr(f) else {
            return Err(Diagnostic::new(self.span(f), "expected a function here"));
        };
        let (vars, body) = (vars.clone(), *body);
        if vars.len() != params.len() {
            return Err(Diagnostic::new(
                self.span(f),
                format!(
                    "this function takes {} parameter(s), but is called with {}",
                    vars.len(),
                    params.len()
                ),
            ));
        }
        let mut xs = vec![];
        for (i, (v, t)) in vars.iter().zip(params).enumerate() {
            let t = match t {
                Type::Exists(elem) => {
                    let (x, len) = self.fresh_exist();
                    self.info.unpacks.insert(Binder::Param(f, i), x.clone());
                    xs.push(x.clone());
                    Type::array((**elem).clone(), len)
                }
                t => t.clone(),
            };
            self.info.var_types[v.index()] = Some(t);
        }
        let mut tb = self.infer(body)?;
        for x in xs {
            tb = self.pack_if_needed(body, tb, &x, self.span(f))?;
        }
        self.set(f, Type::Fun(params.to_vec(), Box::new(tb.clone())));
        Ok(tb)
    }

    fn array_arg(&mut self, prim: &Prim, a: ExprId) -> Result<(Type, ArithExpr)> {
        let t = self.infer(a)?;
        self.array_of(prim, a, t)
    }

    /// The element type and length of `t`, the type of argument `a` of `prim`, an array.
    fn array_of(&self, prim: &Prim, a: ExprId, t: Type) -> Result<(Type, ArithExpr)> {
        match t {
            Type::Array(elem, n) => Ok((*elem, n)),
            Type::Exists(_) => Err(Diagnostic::new(
                self.span(a),
                format!("`{}` cannot take a filter result directly here", prim.name()),
            )
            .with_note("bind it first with `let` or `unpack`")),
            t => Err(Diagnostic::new(
                self.span(a),
                format!("`{}` expects an array, but this has type {t}", prim.name()),
            )
            .with_label(format!("{t}"))),
        }
    }

    fn check(&mut self, span: Span, kind: CheckKind) -> Result<()> {
        let check = SizeCheck { span, kind };
        // Decide at compile time where the sizes are constants.
        if let Err(msg) = check.verify(&|_| None) {
            return Err(Diagnostic::new(span, msg));
        }
        let decided = match &check.kind {
            CheckKind::Divisible { len, by, .. } => len.is_multiple_of(by),
            CheckKind::AtLeast { len, min, .. } => min.prove_le(len),
            CheckKind::Fits { len } => len.as_cst().is_some(),
        };
        if let (CheckKind::Divisible { len, by, .. }, false) = (&check.kind, decided) {
            if let (Some(l), Some(b)) = (len.as_cst(), by.as_cst()) {
                if b == 0 || l % b != 0 {
                    return Err(Diagnostic::new(span, format!("{l} is not a multiple of {b}")));
                }
            }
        }
        if !decided {
            self.info.checks.push(check);
        }
        Ok(())
    }

    fn prim(&mut self, e: ExprId, prim: &Prim, args: &[ExprId]) -> Result<Type> {
        let span = self.span(e);
        let name = prim.name();
        Ok(match prim {
            Prim::Map(MapKind::Vec) => {
                let tv = self.infer(args[1])?;
                let Type::Vector(s, w) = tv else {
                    return Err(Diagnostic::new(
                        self.span(args[1]),
                        format!("`mapVec` maps over the lanes of a vector, but this has type {tv}"),
                    ));
                };
                match self.lambda(args[0], &[Type::Scalar(s)])? {
                    Type::Scalar(r) => Type::Vector(r, w),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(args[0]),
                            format!("the function of `mapVec` must return a scalar, not {t}"),
                        ))
                    }
                }
            }
            Prim::Map(
                MapKind::Plain
                | MapKind::Glb(_)
                | MapKind::Wrg(_)
                | MapKind::Lcl(_)
                | MapKind::Seq
                | MapKind::SeqUnroll,
            ) => {
                let (elem, n) = self.array_arg(prim, args[1])?;
                let r = self.lambda(args[0], &[elem])?;
                Type::array(r, n)
            }
            Prim::Reduce(kind) => {
                let tz = self.infer(args[1])?;
                let (elem, _) = self.array_arg(prim, args[2])?;
                let acc = match kind {
                    ReduceKind::Plain => {
                        if !self.same(&tz, &elem) {
                            let (z, x) = distinct_texts(&tz, &elem);
                            return Err(Diagnostic::new(self.span(args[1]), format!("the initial value of `reduce` has type {z}, but the elements are {x}"))
                                .with_note("`reduce` combines elements of one type; use `reduceSeq` to fold into a different accumulator"));
                        }
                        elem.clone()
                    }
                    ReduceKind::Seq | ReduceKind::SeqUnroll => tz.clone(),
                };
                let r = self.lambda(args[0], &[acc.clone(), elem])?;
                if !self.same(&r, &acc) {
                    let (r, acc) = distinct_texts(&r, &acc);
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the function of `{name}` returns {r}, but the accumulator has type {acc}"),
                    ));
                }
                Type::array(acc, ArithExpr::cst(1))
            }
            Prim::Zip => {
                let mut elems = vec![];
                let mut len: Option<(ArithExpr, ExprId)> = None;
                for a in args {
                    let (t, n) = self.array_arg(prim, *a)?;
                    if let Some((m, first)) = &len {
                        if *m != n && self.norm_len(m) != self.norm_len(&n) {
                            let (mt, nt) = distinct_lengths(m, &n);
                            let mut d = Diagnostic::new(
                                self.span(*a),
                                format!("`zip` of arrays of different lengths: {mt} and {nt}"),
                            )
                            .with_label(format!("length {nt}"))
                            .with_note(format!("the first array of this zip has length {mt}"));
                            if mt.contains("/^") || nt.contains("/^") {
                                d = d.with_note("`/^` is a division that a run-time check makes exact (the length of a `split` or `asVector`); `/` rounds down");
                            }
                            let _ = first;
                            if has_exist_var(m) && has_exist_var(&n) {
                                d = d.with_note("each filter result has its own run-time length, so two different filter results cannot be zipped (thesis ch. 3); zip a filter result with a map of itself instead");
                            }
                            return Err(d);
                        }
                    } else {
                        len = Some((n, *a));
                    }
                    elems.push(t);
                }
                Type::array(Type::Tuple(elems), len.expect("zip has arguments").0)
            }
            Prim::Split(k) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: k.clone(),
                        what: format!("split #{k}"),
                    },
                )?;
                Type::array(Type::array(elem, k.clone()), n.div_assume_exact(k))
            }
            Prim::Join => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                match elem {
                    Type::Array(inner, m) => Type::array(*inner, n.mul(&m)),
                    Type::Exists(_) => {
                        return Err(Diagnostic::new(span, "`join` of an array of filter results is not supported yet: the rows have different run-time lengths"))
                    }
                    t => return Err(Diagnostic::new(self.span(args[0]), format!("`join` expects an array of arrays, but the elements are {t}"))),
                }
            }
            Prim::Transpose => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                match elem {
                    Type::Array(inner, m) => Type::array(Type::array(*inner, n), m),
                    t => {
                        return Err(Diagnostic::new(
                            self.span(args[0]),
                            format!("`transpose` expects an array of arrays, but the elements are {t}"),
                        ))
                    }
                }
            }
            Prim::Slide(s, t) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::AtLeast {
                        len: n.clone(),
                        min: s.clone(),
                        what: format!("slide #{s} #{t}"),
                    },
                )?;
                // Windows that do not fit are dropped (as in Lift): `(n - s) / t + 1` with floor
                // division, written as one quotient; n >= s is checked, so C's `/` is the floor.
                let count = n.sub(s).add(t).div(t);
                Type::array(Type::array(elem, s.clone()), count)
            }
            Prim::Pad(l, r) => {
                let tv = self.infer(args[0])?;
                let (elem, n) = self.array_arg(prim, args[1])?;
                if !self.same(&tv, &elem) {
                    let (tv, elem) = distinct_texts(&tv, &elem);
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the padding value has type {tv}, but the elements are {elem}"),
                    ));
                }
                Type::array(elem, l.add(&n).add(r))
            }
            Prim::PadClamp(l, r) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                Type::array(elem, l.add(&n).add(r))
            }
            Prim::ReorderStride(s) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: s.clone(),
                        what: format!("reorder-stride #{s}"),
                    },
                )?;
                Type::array(elem, n)
            }
            Prim::Reverse => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                Type::array(elem, n)
            }
            Prim::Generate(n) => {
                let r = self.lambda(args[0], &[Type::int()])?;
                Type::array(r, n.clone())
            }
            Prim::Iterate(k) => self.iterate(e, k, args)?,
            Prim::IterateUntil(_) => self.iterate_until(e, args)?,
            Prim::Filter(_) => {
                let (elem, _) = self.array_arg(prim, args[1])?;
                let r = self.lambda(args[0], std::slice::from_ref(&elem))?;
                if r != Type::bool() {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("the predicate of `{name}` must return bool, but it returns {r}"),
                    )
                    .with_label(format!("returns {r}")));
                }
                Type::Exists(Box::new(elem))
            }
            Prim::AsVector(w) => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                let Type::Scalar(s) = elem else {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("`asVector` needs an array of scalars, but the elements are {elem}"),
                    ));
                };
                let w = ArithExpr::cst(i64::from(*w));
                self.check(
                    span,
                    CheckKind::Divisible {
                        len: n.clone(),
                        by: w.clone(),
                        what: format!("asVector #{w}"),
                    },
                )?;
                Type::array(Type::Vector(s, w.as_cst().unwrap_or(1) as u8), n.div_assume_exact(&w))
            }
            Prim::AsScalar => {
                let (elem, n) = self.array_arg(prim, args[0])?;
                let Type::Vector(s, w) = elem else {
                    return Err(Diagnostic::new(
                        self.span(args[0]),
                        format!("`asScalar` needs an array of vectors, but the elements are {elem}"),
                    ));
                };
                Type::array(Type::Scalar(s), n.mul(&ArithExpr::cst(i64::from(w))))
            }
            Prim::To(_) => self.infer(args[0])?,
        })
    }

    /// `iterate #k f xs`: `f` is typed once on a symbolic length `L`, giving `F(L)`; the result
    /// length is `F` applied `k` times to the input length (Lift supports only `c*L` and `L+c`;
    /// substitution handles any `F`, e.g. halving).
    fn iterate(&mut self, e: ExprId, k: &ArithExpr, args: &[ExprId]) -> Result<Type> {
        let host_loop = self.host[e.index()] && ir::host::is_host_loop(self.prog, e);
        if host_loop {
            // A host loop runs one kernel set on two buffers: the state keeps its type.
            let t = self.infer(args[1])?;
            return self.same_state(e, args[0], t, "iterate");
        }
        let Some(count) = k.as_cst() else {
            return Err(ir::unsupported::iterate_count_in_kernel(self.span(e)));
        };
        let state = self.infer(args[1])?;
        if let Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) = state {
            return Err(ir::unsupported::iterate_state_in_kernel(
                self.span(args[1]),
                &state.to_string(),
            ));
        }
        let (elem, n) = self.array_of(&Prim::Iterate(k.clone()), args[1], state)?;
        let mut k = self.n_iter;
        let lname = self.fresh_name("L", &mut k);
        self.n_iter = k;
        self.info.iter_vars.push(lname.clone());
        let l = ArithExpr::size_var_of_kind(VarKind::Iterate, &lname);
        let checks_before = self.info.checks.len();
        let r = self.lambda(args[0], &[Type::array(elem.clone(), l.clone())])?;
        let Type::Array(relem, f_l) = r.clone() else {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the function of `iterate` must return an array, but it returns {r}"),
            ));
        };
        if !self.same(&relem, &elem) {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the function of `iterate` must keep the element type {elem}, but it returns {r}"),
            ));
        }
        let body_checks: Vec<SizeCheck> = self.info.checks.drain(checks_before..).collect();
        // A length-preserving body needs no per-step work; others are unrolled, so bound k.
        if (f_l == l || self.norm_len(&f_l) == l) && body_checks.is_empty() {
            return Ok(Type::array(elem, n));
        }
        if count > MAX_ITERATE {
            return Err(Diagnostic::new(
                self.span(e),
                format!("`iterate #{count}` of a function that changes the length is limited to {MAX_ITERATE} steps"),
            ));
        }
        let mut len = n;
        for _ in 0..count {
            for c in &body_checks {
                let kind = match &c.kind {
                    CheckKind::Divisible { len: cl, by, what } => CheckKind::Divisible {
                        len: cl.subst(&lname, &len),
                        by: by.subst(&lname, &len),
                        what: what.clone(),
                    },
                    CheckKind::AtLeast { len: cl, min, what } => CheckKind::AtLeast {
                        len: cl.subst(&lname, &len),
                        min: min.subst(&lname, &len),
                        what: what.clone(),
                    },
                    CheckKind::Fits { len: cl } => CheckKind::Fits {
                        len: cl.subst(&lname, &len),
                    },
                };
                self.check(c.span, kind)?;
            }
            len = f_l.subst(&lname, &len);
        }
        Ok(Type::array(elem, len))
    }

    /// `(iterate-until #max (lambda (prev next) c) f x)`: `f` keeps the state's type and `c`
    /// is a `bool` or `[bool]1`.
    fn iterate_until(&mut self, e: ExprId, args: &[ExprId]) -> Result<Type> {
        if !self.host[e.index()] {
            return Err(ir::unsupported::iterate_until_in_kernel(self.span(e)));
        }
        let t = self.infer(args[2])?;
        let t = self.same_state(e, args[1], t, "iterate-until")?;
        let c = self.lambda(args[0], &[t.clone(), t.clone()])?;
        if c != Type::bool() && !self.is_bool1(&c) {
            return Err(Diagnostic::new(
                self.span(args[0]),
                format!("the condition of `iterate-until` must be a bool or [bool]1, but it is {c}"),
            ));
        }
        Ok(t)
    }

    /// Types the function of a host loop on the state type `t` and checks it returns `t`. An
    /// existential state `{∃X. [T]X}` (a filter in the step, or a filter result to start from)
    /// keeps its element type and may change its length every step: an array `[T]n` to start
    /// from whose step returns `{∃X. [T]X}` is that state from the first step on.
    fn same_state(&mut self, e: ExprId, f: ExprId, t: Type, what: &str) -> Result<Type> {
        match &t {
            Type::Array(..) => {}
            Type::Exists(elem) if !elem.has_existential() => {}
            Type::Exists(_) => {
                return Err(Diagnostic::new(
                    self.span(e),
                    format!("the state of a host-level `{what}` cannot hold filter results inside its elements (not supported yet)"),
                ))
            }
            Type::Scalar(_) | Type::Vector(..) | Type::Tuple(_) | Type::Fun(..) => {
                return Err(Diagnostic::new(
                    self.span(e),
                    format!("the state of a host-level `{what}` must be an array, but it is {t}"),
                ))
            }
        }
        let checks_before = self.info.checks.len();
        let mut r = self.lambda(f, std::slice::from_ref(&t))?;
        let mut t = t;
        if let (Type::Array(elem, _), Type::Exists(relem)) = (&t, &r) {
            if self.same(elem, relem) {
                // Typed again on the existential state: what the first typing recorded for
                // the function's nodes is overwritten, and its size checks dropped.
                self.info.checks.truncate(checks_before);
                t = Type::Exists(elem.clone());
                r = self.lambda(f, std::slice::from_ref(&t))?;
            }
        }
        if !self.same(&r, &t) {
            let (t, r) = distinct_texts(&t, &r);
            return Err(Diagnostic::new(
                self.span(f),
                format!("the function of a host-level `{what}` must keep the state's type {t}, but it returns {r}"),
            )
            .with_note("the state stays in two device buffers that every step reads and writes"));
        }
        Ok(t)
    }

    fn is_bool1(&self, t: &Type) -> bool {
        matches!(t, Type::Array(elem, n) if **elem == Type::bool() && n.as_cst() == Some(1))
    }

    fn op(&mut self, e: ExprId, op: Op, args: &[ExprId], ts: &[Type]) -> Result<Type> {
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

/// Whether evaluating `l` can exceed 64 bits when its variables do not: quotients, remainders,
/// minima and maxima of values that fit also fit.
fn may_overflow(l: &ArithExpr) -> bool {
    use arith::ExprKind as K;
    match l.kind() {
        K::Cst(_) | K::Var { .. } => false,
        K::Div(a, b) | K::ExactDiv(a, b) | K::Mod(a, b) | K::Min(a, b) | K::Max(a, b) => {
            may_overflow(a) || may_overflow(b)
        }
        K::Sum(_) | K::Prod(_) | K::Pow(..) | K::RawAdd(..) | K::RawSub(..) | K::RawMul(..) => true,
    }
}

fn walk_lengths(t: &Type, f: &mut dyn FnMut(&ArithExpr)) {
    match t {
        Type::Scalar(_) | Type::Vector(..) => {}
        Type::Tuple(ts) => ts.iter().for_each(|t| walk_lengths(t, f)),
        Type::Array(e, n) => {
            f(n);
            walk_lengths(e, f);
        }
        Type::Exists(e) => walk_lengths(e, f),
        Type::Fun(ps, r) => {
            ps.iter().for_each(|t| walk_lengths(t, f));
            walk_lengths(r, f);
        }
    }
}

#[cfg(test)]
mod tests;

mod ints;
