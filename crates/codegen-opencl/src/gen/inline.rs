//! Single-use temporaries inlined into their use, so that a multiply and the add it feeds are
//! one C expression.
//!
//! Generation binds every `let` and many intermediate values to a variable (`float4 p =
//! r * s; acc = acc + p;`). OpenCL C contracts `a * b + c` into a fused multiply-add only within
//! one expression (`FP_CONTRACT` is on by default, and the contraction is allowed because it
//! only removes a rounding), so a product in its own statement stays a multiply and an add: n-body's
//! accumulation issued 3 FMUL + 3 FADD per interaction where one expression gives 3 FFMA.
//!
//! A declaration `T x = e;` is replaced by `e` at its use when all of these hold:
//! - `x` is read exactly once in the kernel and never assigned (names are unique: the
//!   [`Namer`](crate::namer::Namer) hands each out once);
//! - the use comes later in the same statement list, or inside a block or branch of a later
//!   statement, never inside a loop (the value would be computed once per iteration, and what
//!   `e` reads may change between them);
//! - `e` has no effect (no atomics), and no statement run between the declaration and the use
//!   writes a variable or array that `e` names; when `e` reads memory, no barrier or atomic
//!   runs in between either (another work-item's write may then be visible);
//! - `e` reads no element under a condition (a padded read: see [`guarded_read`]);
//! - `e`'s C type is known and is `T` (so no implicit conversion is lost), and the expression
//!   at the use stays within the nesting the generator allows itself (`MAX_DEPTH`).

use super::MAX_DEPTH;
use crate::ast::{self, BinOp, CType, Expr, Param, Scalar, Stmt, UnOp};
use std::collections::{BTreeMap, BTreeSet};

/// Inlines the single-use temporaries of a kernel body (see the module doc).
pub(super) fn inline_temporaries(body: &mut Vec<Stmt>, params: &[Param]) {
    let types = Types::of_kernel(body, params);
    let mut counts = Counts::default();
    counts.stmts(body);
    let single: BTreeSet<String> = (counts.reads.iter())
        .filter(|(x, n)| **n == 1 && !counts.assigned.contains(*x) && counts.decls.get(*x) == Some(&1))
        .map(|(x, _)| x.clone())
        .collect();
    inline_vec(body, &single, &types);
}

/// Every statement list of `body`, inner ones first, has its candidates inlined.
fn inline_in(body: &mut [Stmt], single: &BTreeSet<String>, types: &Types) {
    for s in body.iter_mut() {
        match s {
            Stmt::For { body, .. } | Stmt::Block(body) => inline_vec(body, single, types),
            Stmt::If { then, els, .. } => {
                inline_vec(then, single, types);
                inline_vec(els, single, types);
            }
            Stmt::Decl { .. }
            | Stmt::Assign { .. }
            | Stmt::Call(_)
            | Stmt::Barrier(_)
            | Stmt::VStore { .. }
            | Stmt::Asm(_) => {}
        }
    }
}

fn inline_vec(body: &mut Vec<Stmt>, single: &BTreeSet<String>, types: &Types) {
    inline_in(body, single, types);
    let mut i = 0;
    while i < body.len() {
        if try_inline(body, i, single, types) {
            body.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Inlines the declaration `body[i]` into its use, when it is a candidate; whether it did.
fn try_inline(body: &mut [Stmt], i: usize, single: &BTreeSet<String>, types: &Types) -> bool {
    let Stmt::Decl {
        ty,
        name,
        space: None,
        len: None,
        init: Some(e),
        ..
    } = &body[i]
    else {
        return false;
    };
    if !single.contains(name.as_str()) || types.of(e).as_ref() != Some(ty) || has_atomic(e) || guarded_read(e) {
        return false;
    }
    let x = Expr::var(name);
    let e = e.clone();
    let mut reads = BTreeSet::new();
    names(&e, &mut reads);
    let guard = Guard {
        x: &x,
        reads: &reads,
        memory: reads_memory(&e),
    };
    for later in body.iter_mut().skip(i + 1) {
        match guard.stmt(later) {
            Scan::Going => {}
            Scan::Blocked => return false,
            Scan::Found => {
                let mut s = later.clone();
                substitute(&mut s, &x, &e);
                if depth(&s) > MAX_DEPTH {
                    return false;
                }
                *later = s;
                return true;
            }
        }
    }
    false
}

/// How far the walk towards the use of a temporary got.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scan {
    /// Not reached yet, nothing in the way so far.
    Going,
    /// Reached, with nothing in the way: inline.
    Found,
    /// Something runs in between that `e` may not cross, or the use is in a loop.
    Blocked,
}

/// What the value being moved depends on.
struct Guard<'a> {
    x: &'a Expr,
    /// Variables and arrays the expression names.
    reads: &'a BTreeSet<String>,
    /// Whether it reads memory (an array element or `vload`).
    memory: bool,
}

impl Guard<'_> {
    /// Walks `s` in execution order: whether it holds the use (reached before anything it may
    /// not cross), or blocks the move, or neither.
    fn stmt(&self, s: &Stmt) -> Scan {
        let uses = |e: &Expr| contains(e, self.x);
        match s {
            Stmt::Decl { init, .. } => match init {
                Some(e) if uses(e) => Scan::Found,
                Some(e) if has_atomic(e) => self.clobbers(e),
                Some(_) | None => Scan::Going,
            },
            Stmt::Assign { lhs, rhs, .. } => {
                if uses(lhs) || uses(rhs) {
                    // the right side and the target's indices are read before the write
                    return Scan::Found;
                }
                if has_atomic(rhs) && self.clobbers(rhs) == Scan::Blocked {
                    return Scan::Blocked;
                }
                self.writes(root(lhs))
            }
            Stmt::Call(e) => {
                if uses(e) {
                    return Scan::Found;
                }
                self.clobbers(e)
            }
            Stmt::VStore { value, ptr, offset, .. } => {
                if uses(value) || uses(ptr) || uses(offset) {
                    return Scan::Found;
                }
                let mut written = BTreeSet::new();
                names(ptr, &mut written);
                if written.iter().any(|w| self.reads.contains(w)) {
                    Scan::Blocked
                } else {
                    Scan::Going
                }
            }
            Stmt::Barrier(_) => {
                if self.memory {
                    Scan::Blocked
                } else {
                    Scan::Going
                }
            }
            Stmt::Asm(a) => {
                if a.operands().any(|(e, _, _)| uses(e)) {
                    return Scan::Found;
                }
                match a.written().any(|w| self.writes(root(w)) == Scan::Blocked) {
                    true => Scan::Blocked,
                    false => Scan::Going,
                }
            }
            Stmt::Block(b) => self.stmts(b),
            Stmt::If { cond, then, els } => {
                if uses(cond) {
                    return Scan::Found;
                }
                match self.stmts(then) {
                    Scan::Going => self.stmts(els),
                    done @ (Scan::Found | Scan::Blocked) => done,
                }
            }
            Stmt::For { var, init, body, .. } => {
                let mut inside = false;
                ast::for_each_expr(std::slice::from_ref(s), &mut |e| inside |= contains(e, self.x));
                if inside || self.reads.contains(var.as_str()) || uses(init) {
                    return Scan::Blocked;
                }
                self.stmts(body)
            }
        }
    }

    fn stmts(&self, b: &[Stmt]) -> Scan {
        for s in b {
            match self.stmt(s) {
                Scan::Going => {}
                done @ (Scan::Found | Scan::Blocked) => return done,
            }
        }
        Scan::Going
    }

    /// A write to the variable or array `w`.
    fn writes(&self, w: Option<String>) -> Scan {
        match w {
            Some(w) if !self.reads.contains(&w) => Scan::Going,
            Some(_) | None => Scan::Blocked,
        }
    }

    /// A call run for its effect (an atomic): it may write what its pointer reaches.
    fn clobbers(&self, e: &Expr) -> Scan {
        let mut touched = BTreeSet::new();
        names(e, &mut touched);
        if self.memory || touched.iter().any(|w| self.reads.contains(w)) {
            Scan::Blocked
        } else {
            Scan::Going
        }
    }
}

/// The variable or array an assignment target writes (`a` of `a[i].c0`); `None` for a target
/// of another form.
fn root(lhs: &Expr) -> Option<String> {
    match lhs {
        Expr::Var(v) => Some(v.to_string()),
        Expr::Sym(s) => Some(s.clone()),
        Expr::Index(b, _) | Expr::Field(b, _) => root(b),
        Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..) => None,
    }
}

fn contains(e: &Expr, x: &Expr) -> bool {
    e == x || e.children().any(|c| contains(c, x))
}

/// The identifiers `e` names.
fn names(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Var(v) => {
            out.insert(v.to_string());
        }
        Expr::Sym(s) => {
            out.insert(s.clone());
        }
        Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..) => {}
    }
    e.children().for_each(|c| names(c, out));
}

/// Whether `e` holds a read under a condition (`i < n ? a[i] : 0.0f`, a padded element): the
/// generator holds those in a variable on purpose (`scalar.rs`, `loop_elem`), since PoCL's
/// LLVM aborts on the masked load it makes of one inside `fabs` or `-`
/// (`difffuzz/repros/pocl_llvm_fabs_masked_load`).
fn guarded_read(e: &Expr) -> bool {
    match e {
        Expr::Select(_, a, b) if reads_memory(a) || reads_memory(b) => true,
        Expr::Var(_)
        | Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => e.children().any(guarded_read),
    }
}

fn is_atomic(f: &str) -> bool {
    f.starts_with("atomic_") || f.starts_with("atom_")
}

fn has_atomic(e: &Expr) -> bool {
    matches!(e, Expr::Call(f, _) if is_atomic(f)) || e.children().any(has_atomic)
}

/// Whether `e` reads memory: an element of an array or buffer, or a `vload`.
fn reads_memory(e: &Expr) -> bool {
    match e {
        Expr::Index(..) => true,
        Expr::Call(f, _) if f.starts_with("vload") || is_atomic(f) => true,
        Expr::Var(_)
        | Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Binary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => e.children().any(reads_memory),
    }
}

/// Replaces the one occurrence of `x` in the expressions of `s` by `e`.
fn substitute(s: &mut Stmt, x: &Expr, e: &Expr) {
    ast::for_each_expr_mut(std::slice::from_mut(s), &mut |t| *t = t.subst(x, e));
}

/// The deepest expression of `s`.
fn depth(s: &Stmt) -> usize {
    let mut d = 0;
    ast::for_each_expr(std::slice::from_ref(s), &mut |e| d = d.max(e.depth()));
    d
}

/// Reads, assignments and declarations per variable, over a whole kernel body.
#[derive(Default)]
struct Counts {
    reads: BTreeMap<String, usize>,
    assigned: BTreeSet<String>,
    decls: BTreeMap<String, usize>,
}

impl Counts {
    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Decl { name, init, .. } => {
                    *self.decls.entry(name.to_string()).or_default() += 1;
                    init.iter().for_each(|e| self.expr(e));
                }
                Stmt::Assign { lhs, rhs, .. } => {
                    match root(lhs) {
                        Some(r) => {
                            self.assigned.insert(r);
                        }
                        None => self.expr(lhs),
                    }
                    self.target_parts(lhs);
                    self.expr(rhs);
                }
                Stmt::Call(e) => {
                    // an atomic's pointer operand is written
                    let mut touched = BTreeSet::new();
                    names(e, &mut touched);
                    self.assigned.extend(touched);
                    self.expr(e);
                }
                Stmt::For {
                    var,
                    init,
                    cond,
                    step,
                    body,
                    ..
                } => {
                    self.assigned.insert(var.to_string());
                    self.expr(init);
                    self.expr(cond);
                    self.expr(&step.1);
                    self.stmts(body);
                }
                Stmt::If { cond, then, els } => {
                    self.expr(cond);
                    self.stmts(then);
                    self.stmts(els);
                }
                Stmt::Block(b) => self.stmts(b),
                Stmt::Barrier(_) => {}
                Stmt::VStore { value, ptr, offset, .. } => {
                    self.expr(value);
                    self.expr(ptr);
                    self.expr(offset);
                }
                Stmt::Asm(a) => {
                    // every variable an instruction's operand names counts as written (the
                    // instruction's text is opaque to this pass): none is inlined
                    for (e, _, _) in a.operands() {
                        let mut touched = BTreeSet::new();
                        names(e, &mut touched);
                        self.assigned.extend(touched);
                        self.expr(e);
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        if let Expr::Call(f, xs) = e {
            if is_atomic(f) {
                let mut touched = BTreeSet::new();
                xs.iter().for_each(|x| names(x, &mut touched));
                self.assigned.extend(touched);
            }
        }
        if let Expr::Var(v) = e {
            *self.reads.entry(v.to_string()).or_default() += 1;
        }
        if let Expr::Sym(s) = e {
            *self.reads.entry(s.clone()).or_default() += 1;
        }
        e.children().for_each(|c| self.expr(c));
    }

    /// The indices inside an assignment target are reads (`a[i] = ..` reads `i`).
    fn target_parts(&mut self, lhs: &Expr) {
        match lhs {
            Expr::Index(b, i) => {
                self.target_parts(b);
                self.expr(i);
            }
            Expr::Field(b, _) => self.target_parts(b),
            Expr::Var(_)
            | Expr::Int(_)
            | Expr::Float(_)
            | Expr::Double(_)
            | Expr::TypedInt(..)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Call(..)
            | Expr::Cast(..)
            | Expr::Select(..)
            | Expr::VecLit(..)
            | Expr::Sym(_) => {}
        }
    }
}

/// The C types of a kernel's variables, parameters and arrays, and of expressions over them
/// where C's rules give one without knowing more (`None` otherwise).
#[derive(Default)]
pub(super) struct Types {
    /// Name -> (type, whether an array of that element type).
    vars: BTreeMap<String, (CType, bool)>,
}

impl Types {
    /// The types of a kernel's parameters and of what its body declares.
    pub(super) fn of_kernel(body: &[Stmt], params: &[Param]) -> Types {
        fn decls(body: &[Stmt], t: &mut Types) {
            for s in body {
                match s {
                    Stmt::Decl { ty, name, len, .. } => t.add(name.to_string(), ty.clone(), len.is_some()),
                    Stmt::For { var, body, .. } => {
                        t.add(var.to_string(), CType::INT, false);
                        decls(body, t);
                    }
                    Stmt::Block(b) => decls(b, t),
                    Stmt::If { then, els, .. } => {
                        decls(then, t);
                        decls(els, t);
                    }
                    Stmt::Assign { .. } | Stmt::Call(_) | Stmt::Barrier(_) | Stmt::VStore { .. } | Stmt::Asm(_) => {}
                }
            }
        }
        let mut t = Types::default();
        for p in params {
            t.add(p.name.to_string(), p.ty.clone(), false);
        }
        decls(body, &mut t);
        t
    }

    fn add(&mut self, name: String, ty: CType, array: bool) {
        self.vars.insert(name, (ty, array));
    }

    /// Every variable, parameter and array with its type (and whether it is an array).
    pub(super) fn vars(&self) -> impl Iterator<Item = (&String, &(CType, bool))> {
        self.vars.iter()
    }

    /// The declared type of a variable, and whether it is an array of that element type.
    pub(super) fn var(&self, name: &str) -> Option<&(CType, bool)> {
        self.vars.get(name)
    }

    /// The element type of the array or pointer `b` (`a` of `a[i]`, `vload4(i, a)`).
    fn elem(&self, b: &Expr) -> Option<CType> {
        match b {
            Expr::Var(v) => match self.vars.get(v.as_str())? {
                (t, true) => Some(t.clone()),
                (CType::Ptr { elem, .. }, false) => Some((**elem).clone()),
                (CType::Scalar(_) | CType::Vector(..) | CType::Struct(_), false) => None,
            },
            Expr::Binary(BinOp::Add, p, _) => self.elem(p),
            // `((const global float4*)b)[i]`: an aligned vector read
            Expr::Cast(CType::Ptr { elem, .. }, _) => Some((**elem).clone()),
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Double(_)
            | Expr::TypedInt(..)
            | Expr::Index(..)
            | Expr::Field(..)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Call(..)
            | Expr::Cast(..)
            | Expr::Select(..)
            | Expr::VecLit(..)
            | Expr::Sym(_) => None,
        }
    }

    pub(super) fn of(&self, e: &Expr) -> Option<CType> {
        match e {
            Expr::Var(v) => match self.vars.get(v.as_str())? {
                (t @ (CType::Scalar(_) | CType::Vector(..) | CType::Struct(_)), false) => Some(t.clone()),
                (CType::Ptr { .. }, _) | (_, true) => None,
            },
            // size variables, loop indices and run-time lengths
            Expr::Sym(_) | Expr::Int(_) => Some(CType::INT),
            Expr::Float(_) => Some(CType::FLOAT),
            Expr::Double(_) => Some(CType::Scalar(Scalar::Double)),
            Expr::TypedInt(s, _) => Some(CType::Scalar(*s)),
            Expr::Index(b, _) => self.elem(b),
            Expr::Field(a, f) => {
                // `s2` is a lane, `s012` a vector of lanes
                let lanes = f.strip_prefix('s')?;
                let ok = |w: u8| lanes.chars().all(|c| c.to_digit(16).is_some_and(|k| k < u32::from(w)));
                match (self.of(a)?, lanes.len()) {
                    (CType::Vector(s, w), 1) if ok(w) => Some(CType::Scalar(s)),
                    (CType::Vector(s, w), n @ (2 | 3 | 4 | 8 | 16)) if ok(w) => Some(CType::Vector(s, n as u8)),
                    (CType::Vector(..) | CType::Scalar(_) | CType::Struct(_) | CType::Ptr { .. }, _) => None,
                }
            }
            Expr::Unary(UnOp::Neg | UnOp::BitNot, a) => self.of(a),
            Expr::Unary(UnOp::Not, a) => match self.of(a)? {
                CType::Scalar(_) => Some(CType::INT),
                CType::Vector(..) | CType::Struct(_) | CType::Ptr { .. } => None,
            },
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.of(a)?, self.of(b)?);
                match op {
                    BinOp::Mul | BinOp::Div | BinOp::Rem | BinOp::Add | BinOp::Sub => arith(&a, &b),
                    // the result of a shift has the type of its left operand
                    BinOp::Shl | BinOp::Shr => a.is_integer().then_some(a),
                    BinOp::BitAnd | BinOp::BitXor | BinOp::BitOr => arith(&a, &b).filter(CType::is_integer),
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne | BinOp::And | BinOp::Or => {
                        match (a, b) {
                            (CType::Scalar(_), CType::Scalar(_)) => Some(CType::INT),
                            _ => None,
                        }
                    }
                }
            }
            Expr::Call(f, xs) => self.call(f, xs),
            Expr::Cast(t, _) | Expr::VecLit(t, _) => Some(t.clone()),
            Expr::Select(_, a, b) => {
                let t = self.of(a)?;
                (self.of(b)? == t).then_some(t)
            }
        }
    }

    fn call(&self, f: &str, xs: &[Expr]) -> Option<CType> {
        if let Some(w) = f.strip_prefix("vload") {
            let w: u8 = w.parse().ok()?;
            return match (xs.get(1).and_then(|p| self.elem(p))?, w) {
                (CType::Scalar(s), 2..=16) => Some(CType::Vector(s, w)),
                (CType::Scalar(_) | CType::Vector(..) | CType::Struct(_) | CType::Ptr { .. }, _) => None,
            };
        }
        let ts = xs.iter().map(|x| self.of(x)).collect::<Option<Vec<_>>>()?;
        let first = ts.first()?.clone();
        let float = matches!(
            first,
            CType::Scalar(Scalar::Float | Scalar::Double) | CType::Vector(Scalar::Float | Scalar::Double, _)
        );
        let same = ts.iter().all(|t| *t == first);
        match f {
            // gentype f(gentype, ...) over floating types
            "sqrt" | "rsqrt" | "exp" | "log" | "sin" | "cos" | "fabs" | "pow" | "fma" | "fmin" | "fmax" | "fmod" => {
                (float && same).then_some(first)
            }
            "min" | "max" => same.then_some(first),
            "dot" | "length" => match first {
                CType::Vector(s, _) if same => Some(CType::Scalar(s)),
                CType::Scalar(_) if same => Some(first),
                CType::Vector(..) | CType::Scalar(_) | CType::Struct(_) | CType::Ptr { .. } => None,
            },
            _ => None,
        }
    }
}

/// The type of an arithmetic operator's result under C's conversions (a vector with a scalar
/// of its element type is the vector).
fn arith(a: &CType, b: &CType) -> Option<CType> {
    use Scalar::{Double, Float, Int, Long, UInt, ULong};
    let rank = |s: &Scalar| match s {
        Int => 0,
        UInt => 1,
        Long => 2,
        ULong => 3,
        Float => 4,
        Double => 5,
    };
    match (a, b) {
        (CType::Scalar(x), CType::Scalar(y)) => Some(CType::Scalar(if rank(x) >= rank(y) { *x } else { *y })),
        (CType::Vector(s, w), CType::Scalar(t)) | (CType::Scalar(t), CType::Vector(s, w)) => {
            (s == t).then_some(CType::Vector(*s, *w))
        }
        (CType::Vector(..), CType::Vector(..)) => (a == b).then(|| a.clone()),
        (CType::Struct(_) | CType::Ptr { .. }, _) | (_, CType::Struct(_) | CType::Ptr { .. }) => None,
    }
}

#[cfg(test)]
#[path = "inline_tests.rs"]
mod tests;
