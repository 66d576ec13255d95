//! Symbolic integer arithmetic for array lengths and indices.
//!
//! # Canonical form
//!
//! An [`ArithExpr`] is always kept simplified: every constructor (`add`,
//! `mul`, `div`, ...) normalises its result, so two expressions that the
//! simplifier can show equal are *structurally* equal, and `==` / `Hash` can
//! be used to compare array lengths.
//!
//! The normal form is a polynomial with `i64` coefficients over *atoms*:
//!
//! * an atom is a variable, or an operation the polynomial ring cannot absorb:
//!   C division `a/b`, C remainder `a%b`, asserted-exact division `a /^ b`
//!   ([`ArithExpr::div_assume_exact`], for lengths such as `N /^ k`),
//!   `pow(a, e)` with a non-constant (or negative) exponent, `min`, `max`;
//! * a monomial is a coefficient times a sorted multiset of atoms
//!   ([`ExprKind::Prod`], coefficient first, omitted when it is 1);
//! * a polynomial is a sum of monomials with distinct atom multisets
//!   ([`ExprKind::Sum`], sorted, constant term last).
//!
//! Products are fully distributed over sums, which is what makes
//! `2*(N+1) - 2 == 2*N` and `(N*2)/2 == N` structural facts. The operands of
//! every atom are themselves canonical.
//!
//! # Soundness rule
//!
//! Division and remainder follow C (truncation toward zero, remainder has the
//! sign of the dividend). A rewrite that is not an identity over all integers
//! fires only when its side condition (non-negativity, `x < y`, a non-zero
//! divisor, ...) is *proved* from the variables' ranges; when a proof fails the
//! node is kept as it is. In particular nothing is folded away when it could
//! hide a division by zero, and constant folding that would overflow `i64`
//! keeps the operation as an unfolded node (`ExprKind::RawAdd` etc.) rather
//! than panicking or wrapping. Proofs work on constant interval bounds plus a
//! bounded elimination of variables by their symbolic range ends, so they are
//! incomplete but terminate quickly.
//!
//! Size variables ([`ArithExpr::size_var`]) range over `[1, inf)`; other
//! variables carry their own [`Range`] (which may mention other variables,
//! e.g. a loop index `i` in `[0, N)`).
//!
//! # Note on `min` / `max`
//!
//! `ArithExpr` derives `Ord` (structural order), so `Ord::min` / `Ord::max`
//! exist too, and method resolution prefers them for a by-value receiver:
//! with `a: ArithExpr`, `a.min(&b)` does not compile and `a.min(b)` silently
//! returns the *structurally* smaller operand. Write `ArithExpr::min(&a, &b)`
//! (or call the method on a `&ArithExpr` binding).

mod bounds;
mod display;
mod eval;
mod ops;
mod poly;
mod simplify;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use display::Marked;
pub use eval::EvalError;

use poly::Poly;

/// A simplified symbolic integer expression; see the crate docs for the form.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ArithExpr(Arc<ExprKind>);

/// The range of a variable: `min <= v < max_excl` (`None`: unbounded above).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Range {
    pub min: ArithExpr,
    pub max_excl: Option<ArithExpr>,
}

impl Range {
    pub fn new(min: ArithExpr, max_excl: Option<ArithExpr>) -> Range {
        Range { min, max_excl }
    }
    /// `[0, n)`, the range of a loop index over `n` iterations.
    pub fn upto(n: ArithExpr) -> Range {
        Range {
            min: ArithExpr::cst(0),
            max_excl: Some(n),
        }
    }
    /// `[lo, n)`.
    pub fn between(lo: ArithExpr, n: ArithExpr) -> Range {
        Range {
            min: lo,
            max_excl: Some(n),
        }
    }
    /// `[min, inf)`.
    pub fn at_least(min: ArithExpr) -> Range {
        Range { min, max_excl: None }
    }
    fn subst(&self, name: &str, by: &ArithExpr) -> Range {
        Range {
            min: self.min.subst(name, by),
            max_excl: self.max_excl.as_ref().map(|m| m.subst(name, by)),
        }
    }
}

/// Who introduced a variable. Part of the variable's identity (equality, hashing, ordering):
/// two variables are the same only if name *and* kind agree, so lengths the compiler
/// invents can never be mistaken for a size the user declared under the same spelling.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum VarKind {
    /// A size variable of the program, an index, or any variable built with the plain
    /// constructors ([`ArithExpr::var`], [`ArithExpr::size_var`], [`ArithExpr::pos_var`]).
    User,
    /// The run-time length of an unpacked existential array (a filter result).
    Existential,
    /// The symbolic length an `iterate` body is typed on.
    Iterate,
    /// Any other length or index a compiler pass invents (tiles, generated loops).
    Generated,
}

/// The node kinds of a canonical expression (read-only view).
///
/// Values of `ArithExpr` can only be built through the simplifying
/// constructors, so holding an `ExprKind` does not allow bypassing them.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum ExprKind {
    Cst(i64),
    /// Variables compare by name first, so a name sorts the same wherever used; the kind is
    /// part of the identity, so a generated length never equals a user's size of that name.
    Var {
        name: String,
        kind: VarKind,
        range: Range,
    },
    /// At least two monomials with distinct atom lists; constant term last.
    Sum(Vec<ArithExpr>),
    /// Optional constant coefficient (first, never 0 or 1) then sorted atoms;
    /// at least two factors.
    Prod(Vec<ArithExpr>),
    Div(ArithExpr, ArithExpr),
    /// `a /^ b`: division that the program asserts to be exact (Lift's `/^`),
    /// e.g. the outer length `N /^ k` of `split k` over `N` elements. Being
    /// exact, it cancels against multiplication: `(N /^ k) * k == N`.
    ExactDiv(ArithExpr, ArithExpr),
    Mod(ArithExpr, ArithExpr),
    Pow(ArithExpr, ArithExpr),
    Min(ArithExpr, ArithExpr),
    Max(ArithExpr, ArithExpr),
    /// Operations whose folding overflowed `i64`; kept so nothing wraps.
    RawAdd(ArithExpr, ArithExpr),
    RawSub(ArithExpr, ArithExpr),
    RawMul(ArithExpr, ArithExpr),
}

impl ArithExpr {
    fn mk(k: ExprKind) -> ArithExpr {
        ArithExpr(Arc::new(k))
    }

    /// The node kind of this (canonical) expression.
    pub fn kind(&self) -> &ExprKind {
        &self.0
    }

    pub fn cst(c: i64) -> ArithExpr {
        ArithExpr::mk(ExprKind::Cst(c))
    }

    /// A size variable: range `[1, inf)`.
    pub fn size_var(name: &str) -> ArithExpr {
        ArithExpr::var(name, Range::at_least(ArithExpr::cst(1)))
    }

    /// A non-negative variable: range `[0, inf)`.
    pub fn pos_var(name: &str) -> ArithExpr {
        ArithExpr::var(name, Range::at_least(ArithExpr::cst(0)))
    }

    pub fn var(name: &str, range: Range) -> ArithExpr {
        ArithExpr::var_of_kind(VarKind::User, name, range)
    }

    /// A variable of the given kind; see [`VarKind`].
    pub fn var_of_kind(kind: VarKind, name: &str, range: Range) -> ArithExpr {
        ArithExpr::mk(ExprKind::Var {
            name: name.to_string(),
            kind,
            range,
        })
    }

    /// A length variable (range `[1, inf)`) of the given kind.
    pub fn size_var_of_kind(kind: VarKind, name: &str) -> ArithExpr {
        ArithExpr::var_of_kind(kind, name, Range::at_least(ArithExpr::cst(1)))
    }

    /// The kind of a variable node.
    pub fn var_kind(&self) -> Option<VarKind> {
        match &*self.0 {
            ExprKind::Var { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    pub fn add(&self, o: &ArithExpr) -> ArithExpr {
        match Poly::from_expr(self).checked_add(&Poly::from_expr(o)) {
            Some(p) => simplify::finish_poly(p),
            None => ArithExpr::raw_commutative(self, o, ExprKind::RawAdd),
        }
    }

    pub fn sub(&self, o: &ArithExpr) -> ArithExpr {
        match Poly::from_expr(self).checked_sub(&Poly::from_expr(o)) {
            Some(p) => simplify::finish_poly(p),
            None => ArithExpr::mk(ExprKind::RawSub(self.clone(), o.clone())),
        }
    }

    pub fn mul(&self, o: &ArithExpr) -> ArithExpr {
        match Poly::from_expr(self).checked_mul(&Poly::from_expr(o)) {
            Some(p) => simplify::finish_poly(p),
            None => ArithExpr::raw_commutative(self, o, ExprKind::RawMul),
        }
    }

    /// `-self`.
    pub fn neg(&self) -> ArithExpr {
        ArithExpr::cst(0).sub(self)
    }

    /// C integer division (truncates toward zero).
    pub fn div(&self, o: &ArithExpr) -> ArithExpr {
        simplify::div(self, o)
    }

    /// The text of the expression with its exact divisions written `/^` (`N/^4` is the length
    /// of `split #4`, `N/4` the user's floor division, which differ until a check shows
    /// `4 | N`). The plain text (`Display`) is OpenCL C and prints both as `/`.
    pub fn marked(&self) -> Marked<'_> {
        Marked(self)
    }

    /// `self /^ d`: a division the caller asserts to be exact (array lengths
    /// of `split`). It is kept as an `ExactDiv` atom unless [`exact_div`]
    /// succeeds, and cancels when multiplied by a multiple of `d`, so that
    /// `(N /^ 2) * 2 == N`. Evaluates (and prints) as C `/`, which agrees
    /// whenever the assertion holds.
    ///
    /// [`exact_div`]: ArithExpr::exact_div
    pub fn div_assume_exact(&self, d: &ArithExpr) -> ArithExpr {
        simplify::exact_quot(self, d)
    }

    /// C `%` (the result has the sign of the dividend).
    pub fn rem(&self, o: &ArithExpr) -> ArithExpr {
        simplify::rem(self, o)
    }

    /// A constant non-negative exponent expands to a product (up to a size
    /// limit); anything else is a `Pow` node.
    pub fn pow(&self, e: &ArithExpr) -> ArithExpr {
        simplify::pow(self, e)
    }

    pub fn min(&self, o: &ArithExpr) -> ArithExpr {
        simplify::min_max(self, o, true)
    }

    pub fn max(&self, o: &ArithExpr) -> ArithExpr {
        simplify::min_max(self, o, false)
    }

    /// `Some(q)` iff `self == q * d` holds as a polynomial identity (checked
    /// by multiplying back), e.g. `(4*N)/2 -> 2*N`, `(2*N)/N -> 2`, but
    /// `N/2 -> None`. `d == 0` always gives `None`.
    pub fn exact_div(&self, d: &ArithExpr) -> Option<ArithExpr> {
        simplify::exact_div(self, d)
    }

    pub fn as_cst(&self) -> Option<i64> {
        match *self.0 {
            ExprKind::Cst(c) => Some(c),
            _ => None,
        }
    }

    pub fn is_cst(&self, c: i64) -> bool {
        self.as_cst() == Some(c)
    }

    /// The name and range of a variable node.
    pub fn as_var(&self) -> Option<(&str, &Range)> {
        match &*self.0 {
            ExprKind::Var { name, range, .. } => Some((name, range)),
            _ => None,
        }
    }

    /// Evaluates with C semantics; every intermediate step is overflow-checked.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
        eval::eval(self, env)
    }

    /// Replaces variable `name` (also inside other variables' ranges) and
    /// re-simplifies.
    pub fn subst(&self, name: &str, by: &ArithExpr) -> ArithExpr {
        self.map_vars(&|n, kind, r| {
            if n == name {
                Some(by.clone())
            } else {
                // Ranges are rebuilt so that e.g. `i in [0, N)` becomes
                // `i in [0, 8)` once `N := 8`.
                Some(ArithExpr::var_of_kind(kind, n, r.subst(name, by)))
            }
        })
    }

    /// Rebuilds the expression bottom-up through the simplifying
    /// constructors, replacing each variable by `f(name, kind, range)` (or
    /// keeping it when `f` returns `None`).
    pub fn map_vars(&self, f: &dyn Fn(&str, VarKind, &Range) -> Option<ArithExpr>) -> ArithExpr {
        self.rebuild(&Rebuild {
            var: f,
            div: &|a, b| a.div(b),
            rem: &|a, b| a.rem(b),
        })
    }

    /// Uses facts `d | e` (each `(e, d)`: `e` is a multiple of `d`, e.g. checked at run time
    /// before anything runs) to read every C division `e / d` as the exact quotient `e /^ d`,
    /// which then cancels against multiplication: under `2 | N`, `(N/2)*2` is `N`, and the
    /// user's `N/2` equals the `N /^ 2` of `split #2`. A remainder `e % d` becomes 0. Sound
    /// exactly when the facts hold.
    ///
    /// The facts are first closed under what they imply, so that a division is exact whenever
    /// they show it is, however they were written: `10 | N` and `3 | N/10` give `30 | N` (a
    /// split of a split against the user's `N/30`), and `30 | N` gives `15 | N`.
    pub fn assume_divisible(&self, facts: &[(ArithExpr, ArithExpr)]) -> ArithExpr {
        if facts.is_empty() || !self.has_division() {
            return self.clone();
        }
        self.assume_closed(&close_facts(facts))
    }

    /// [`assume_divisible`](ArithExpr::assume_divisible) under facts already closed.
    fn assume_closed(&self, facts: &[(ArithExpr, ArithExpr)]) -> ArithExpr {
        if !self.has_division() {
            return self.clone();
        }
        let holds = |a: &ArithExpr, b: &ArithExpr| facts.iter().any(|(e, d)| e == a && divides(b, d));
        self.rebuild(&Rebuild {
            var: &|_, _, _| None,
            div: &|a, b| {
                if holds(a, b) {
                    a.div_assume_exact(b)
                } else {
                    a.div(b)
                }
            },
            rem: &|a, b| {
                if holds(a, b) {
                    ArithExpr::cst(0)
                } else {
                    a.rem(b)
                }
            },
        })
    }

    fn has_division(&self) -> bool {
        match &*self.0 {
            ExprKind::Div(..) | ExprKind::Mod(..) => true,
            _ => {
                let mut found = false;
                self.for_each_child(&mut |c| found = found || c.has_division());
                found
            }
        }
    }

    /// Rebuilds bottom-up through the simplifying constructors, with the variables, C
    /// divisions and remainders through the hooks of `r` (a variable is kept when its hook
    /// returns `None`).
    fn rebuild(&self, r: &Rebuild<'_>) -> ArithExpr {
        use ExprKind::*;
        let bin = |a: &ArithExpr, b: &ArithExpr| (a.rebuild(r), b.rebuild(r));
        match &*self.0 {
            Cst(_) => self.clone(),
            Var { name, kind, range } => (r.var)(name, *kind, range).unwrap_or_else(|| self.clone()),
            Sum(ts) => ts.iter().fold(ArithExpr::cst(0), |acc, t| acc.add(&t.rebuild(r))),
            Prod(fs) => fs.iter().fold(ArithExpr::cst(1), |acc, t| acc.mul(&t.rebuild(r))),
            Div(a, b) => {
                let (a, b) = bin(a, b);
                (r.div)(&a, &b)
            }
            ExactDiv(a, b) => {
                let (a, b) = bin(a, b);
                a.div_assume_exact(&b)
            }
            Mod(a, b) => {
                let (a, b) = bin(a, b);
                (r.rem)(&a, &b)
            }
            Pow(a, b) => {
                let (a, b) = bin(a, b);
                a.pow(&b)
            }
            Min(a, b) => {
                let (a, b) = bin(a, b);
                ArithExpr::min(&a, &b)
            }
            Max(a, b) => {
                let (a, b) = bin(a, b);
                ArithExpr::max(&a, &b)
            }
            RawAdd(a, b) => {
                let (a, b) = bin(a, b);
                a.add(&b)
            }
            RawSub(a, b) => {
                let (a, b) = bin(a, b);
                a.sub(&b)
            }
            RawMul(a, b) => {
                let (a, b) = bin(a, b);
                a.mul(&b)
            }
        }
    }

    /// Names of the variables the value depends on (variables that occur only
    /// inside another variable's range are not included).
    pub fn free_vars(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_vars(&mut out);
        out
    }

    /// Names of the free variables of one kind (same notion as [`ArithExpr::free_vars`]).
    pub fn free_vars_of_kind(&self, kind: VarKind) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_kind(kind, &mut out);
        out
    }

    fn collect_kind(&self, kind: VarKind, out: &mut BTreeSet<String>) {
        match &*self.0 {
            ExprKind::Var { name, kind: k, .. } => {
                if *k == kind {
                    out.insert(name.clone());
                }
            }
            _ => self.for_each_child(&mut |c| c.collect_kind(kind, out)),
        }
    }

    fn collect_vars(&self, out: &mut BTreeSet<String>) {
        match &*self.0 {
            ExprKind::Var { name, .. } => {
                out.insert(name.clone());
            }
            _ => self.for_each_child(&mut |c| c.collect_vars(out)),
        }
    }

    /// Whether the value depends on variable `name` (same notion as
    /// [`ArithExpr::free_vars`]).
    pub fn mentions(&self, name: &str) -> bool {
        match &*self.0 {
            ExprKind::Var { name: n, .. } => n == name,
            _ => {
                let mut found = false;
                self.for_each_child(&mut |c| found = found || c.mentions(name));
                found
            }
        }
    }

    /// Direct operands (not variable ranges).
    pub(crate) fn for_each_child(&self, f: &mut dyn FnMut(&ArithExpr)) {
        use ExprKind::*;
        match &*self.0 {
            Cst(_) | Var { .. } => {}
            Sum(xs) | Prod(xs) => xs.iter().for_each(f),
            Div(a, b)
            | ExactDiv(a, b)
            | Mod(a, b)
            | Pow(a, b)
            | Min(a, b)
            | Max(a, b)
            | RawAdd(a, b)
            | RawSub(a, b)
            | RawMul(a, b) => {
                f(a);
                f(b);
            }
        }
    }

    /// Best constant lower bound derivable from the ranges (`None`: unbounded
    /// or unknown).
    pub fn lower_bound(&self) -> Option<i64> {
        bounds::interval(self).lo_i64()
    }

    /// Best constant upper bound (inclusive) derivable from the ranges.
    pub fn upper_bound(&self) -> Option<i64> {
        bounds::interval(self).hi_i64()
    }

    /// Sound: `true` only if `self < o` for every valuation within the ranges.
    pub fn prove_lt(&self, o: &ArithExpr) -> bool {
        bounds::prove_nonneg(&o.sub(self).sub(&ArithExpr::cst(1)))
    }

    pub fn prove_le(&self, o: &ArithExpr) -> bool {
        bounds::prove_nonneg(&o.sub(self))
    }

    pub fn prove_nonneg(&self) -> bool {
        bounds::prove_nonneg(self)
    }

    pub fn prove_positive(&self) -> bool {
        bounds::prove_nonneg(&self.sub(&ArithExpr::cst(1)))
    }

    /// Provably `!= 0` for every valuation.
    pub fn prove_nonzero(&self) -> bool {
        self.prove_positive() || self.neg().prove_positive()
    }

    /// Whether `self` is provably a multiple of `d` (`self == q*d` for some
    /// polynomial `q`).
    pub fn is_multiple_of(&self, d: &ArithExpr) -> bool {
        self.is_cst(0) || self.exact_div(d).is_some()
    }

    fn raw_commutative(a: &ArithExpr, b: &ArithExpr, k: fn(ArithExpr, ArithExpr) -> ExprKind) -> ArithExpr {
        let (x, y) = if a <= b { (a, b) } else { (b, a) };
        ArithExpr::mk(k(x.clone(), y.clone()))
    }
}

/// How [`ArithExpr::rebuild`] rebuilds variables, divisions and remainders.
/// Whether `b` divides `d` as polynomials (`3 | 6`, `k | 2*k`).
fn divides(b: &ArithExpr, d: &ArithExpr) -> bool {
    b == d || d.exact_div(b).is_some()
}

/// How many rounds [`close_facts`] takes at most: each round composes facts one level
/// deeper, and programs nest splits only a few deep.
const FACT_ROUNDS: usize = 4;

/// The divisibility facts with what they imply: every fact's dividend read under the others
/// (`3 | N/10` under `10 | N` is `3 | N/^10`), and `d1 | e` with `d2 | e/^d1` composed into
/// `d1*d2 | e`.
fn close_facts(facts: &[(ArithExpr, ArithExpr)]) -> Vec<(ArithExpr, ArithExpr)> {
    let mut out = facts.to_vec();
    for _ in 0..FACT_ROUNDS {
        let before = out.clone();
        for (e, _) in &mut out {
            *e = e.assume_closed(&before);
        }
        let snapshot = out.clone();
        for (e1, d1) in &snapshot {
            let q = e1.div_assume_exact(d1);
            for (e2, d2) in &snapshot {
                let composed = (e1.clone(), d1.mul(d2));
                if *e2 == q && !out.contains(&composed) {
                    out.push(composed);
                }
            }
        }
        if out == before {
            break;
        }
    }
    out
}

struct Rebuild<'a> {
    var: &'a dyn Fn(&str, VarKind, &Range) -> Option<ArithExpr>,
    div: &'a dyn Fn(&ArithExpr, &ArithExpr) -> ArithExpr,
    rem: &'a dyn Fn(&ArithExpr, &ArithExpr) -> ArithExpr,
}

impl From<i64> for ArithExpr {
    fn from(c: i64) -> ArithExpr {
        ArithExpr::cst(c)
    }
}
