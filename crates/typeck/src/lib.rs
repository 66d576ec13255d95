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
mod expr;
mod loops;
mod ops;
mod prims;

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
    /// The program's host/kernel split (`ir::host::HostPlan`), with the array-valued `if`s
    /// this checker admits at host level: the later stages read it instead of walking again.
    pub host: ir::host::HostPlan,
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
            host: ir::host::HostPlan::of(prog),
            ..TypeInfo::default()
        },
        n_exist: 0,
        n_iter: 0,
        selects: vec![],
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
    let selects = std::mem::take(&mut cx.selects);
    cx.info.host.add_selects(prog, selects);
    cx.normalise_all();
    cx.lengths_fit()?;
    Ok(cx.info)
}

struct Checker<'a> {
    prog: &'a Program,
    info: TypeInfo,
    n_exist: usize,
    n_iter: usize,
    /// The `if`s at host level that select arrays (`ir::host::Section::Select` where their
    /// parts launch no kernels).
    selects: Vec<ExprId>,
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
