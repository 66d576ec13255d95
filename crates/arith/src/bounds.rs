//! Bounds and proofs.
//!
//! Two layers: a constant interval analysis (cheap, decorrelates every atom),
//! and `prove_nonneg`, which first eliminates atoms that occur linearly by
//! their *symbolic* range ends (`i in [0, N)` is replaced by `N-1` where its
//! coefficient is negative) so that correlated terms such as `N - i - 1`
//! cancel before the interval analysis runs.
//!
//! Soundness of elimination: if `e = C*a + D` with `C >= 0` for all
//! valuations and `a >= lo(a)`, then `e >= C*lo(a) + D`, so proving the
//! latter non-negative (for all valuations of its symbols) proves `e >= 0`.
//! Treating symbols of the bound as independent of the eliminated atom only
//! loses precision, never soundness.

use std::cell::Cell;

use crate::poly::Poly;
use crate::{ArithExpr, ExprKind};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Ext {
    NegInf,
    Fin(i128),
    PosInf,
}
use Ext::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Interval {
    pub lo: Ext,
    pub hi: Ext,
}

const TOP: Interval = Interval { lo: NegInf, hi: PosInf };

fn point(c: i128) -> Interval {
    Interval { lo: Fin(c), hi: Fin(c) }
}

impl Interval {
    pub fn lo_i64(&self) -> Option<i64> {
        match self.lo {
            Fin(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
    pub fn hi_i64(&self) -> Option<i64> {
        match self.hi {
            Fin(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// `down`: whether the result is used as a lower bound (round toward -inf
/// whenever precision is lost).
fn add_ext(a: Ext, b: Ext, down: bool) -> Ext {
    match (a, b) {
        (Fin(x), Fin(y)) => match x.checked_add(y) {
            Some(v) => Fin(v),
            None if down => NegInf,
            None => PosInf,
        },
        (NegInf, PosInf) | (PosInf, NegInf) => {
            if down {
                NegInf
            } else {
                PosInf
            }
        }
        (NegInf, _) | (_, NegInf) => NegInf,
        _ => PosInf,
    }
}

fn sign(a: Ext) -> i32 {
    match a {
        NegInf => -1,
        PosInf => 1,
        Fin(v) => v.signum() as i32,
    }
}

fn mul_ext(a: Ext, b: Ext, down: bool) -> Ext {
    match (a, b) {
        (Fin(x), Fin(y)) => match x.checked_mul(y) {
            Some(v) => Fin(v),
            None => {
                let pos = (x < 0) == (y < 0);
                match (pos, down) {
                    (true, true) => Fin(i128::MAX),
                    (true, false) => PosInf,
                    (false, true) => NegInf,
                    (false, false) => Fin(i128::MIN),
                }
            }
        },
        // Interval ends are attained by finite values, so 0 * inf = 0.
        (Fin(0), _) | (_, Fin(0)) => Fin(0),
        _ => {
            if sign(a) * sign(b) > 0 {
                PosInf
            } else {
                NegInf
            }
        }
    }
}

fn neg_ext(a: Ext) -> Ext {
    match a {
        NegInf => PosInf,
        PosInf => NegInf,
        Fin(v) => v.checked_neg().map(Fin).unwrap_or(PosInf),
    }
}

fn iadd(a: Interval, b: Interval) -> Interval {
    Interval {
        lo: add_ext(a.lo, b.lo, true),
        hi: add_ext(a.hi, b.hi, false),
    }
}

fn ineg(a: Interval) -> Interval {
    Interval {
        lo: neg_ext(a.hi),
        hi: neg_ext(a.lo),
    }
}

fn imul(a: Interval, b: Interval) -> Interval {
    let cs = [(a.lo, b.lo), (a.lo, b.hi), (a.hi, b.lo), (a.hi, b.hi)];
    let lo = cs.iter().map(|&(x, y)| mul_ext(x, y, true)).min().unwrap_or(NegInf);
    let hi = cs.iter().map(|&(x, y)| mul_ext(x, y, false)).max().unwrap_or(PosInf);
    Interval { lo, hi }
}

/// Truncating division of an end by a positive divisor end.
fn div_ext(a: Ext, b: Ext) -> Ext {
    match (a, b) {
        (Fin(x), Fin(y)) if y > 0 => Fin(x / y),
        (Fin(_), PosInf) => Fin(0),
        (NegInf, _) => NegInf,
        (PosInf, _) => PosInf,
        _ => NegInf, // not reached for positive divisors
    }
}

/// `a / b` for `b >= 1`: truncation is monotone in `a`, and for fixed `a` it
/// moves toward zero as `b` grows.
fn idiv_pos(a: Interval, b: Interval) -> Interval {
    let lo = match a.lo {
        NegInf => NegInf,
        Fin(x) if x >= 0 => div_ext(Fin(x), b.hi),
        x => div_ext(x, b.lo),
    };
    let hi = match a.hi {
        PosInf => PosInf,
        Fin(x) if x >= 0 => div_ext(Fin(x), b.lo),
        x => div_ext(x, b.hi),
    };
    Interval { lo, hi }
}

fn idiv(a: Interval, b: Interval) -> Interval {
    if b.lo >= Fin(1) {
        idiv_pos(a, b)
    } else if b.hi <= Fin(-1) {
        // a / b == -(a / -b) under truncation.
        ineg(idiv_pos(a, ineg(b)))
    } else {
        TOP
    }
}

fn imod(a: Interval, b: Interval) -> Interval {
    // |a % b| <= |b| - 1 and |a % b| <= |a|, with the sign of a.
    let babs = std::cmp::max(neg_ext(b.lo), b.hi);
    if babs <= Fin(0) {
        return TOP;
    }
    let m = add_ext(babs, Fin(-1), false);
    let lo = if a.lo >= Fin(0) {
        Fin(0)
    } else {
        std::cmp::max(a.lo, neg_ext(m))
    };
    let hi = if a.hi <= Fin(0) { Fin(0) } else { std::cmp::min(a.hi, m) };
    Interval { lo, hi }
}

fn pow_ext(a: Ext, e: Ext) -> Ext {
    match (a, e) {
        (Fin(x), Fin(n)) => match u32::try_from(n).ok().and_then(|n| x.checked_pow(n)) {
            Some(v) => Fin(v),
            None => PosInf,
        },
        (Fin(0), _) => Fin(0),
        (Fin(1), _) => Fin(1),
        _ => PosInf,
    }
}

fn ipow(a: Interval, e: Interval) -> Interval {
    if e.lo < Fin(0) || a.lo < Fin(0) {
        return TOP;
    }
    // Base >= 0, exponent >= 0: monotone in both once base >= 1; a zero
    // exponent gives 1, a zero base 0, so 0 is the safe low end if a.lo < 1.
    let lo = if a.lo >= Fin(1) { pow_ext(a.lo, e.lo) } else { Fin(0) };
    let hi = std::cmp::max(pow_ext(a.hi, e.hi), Fin(1));
    Interval { lo, hi }
}

pub(crate) fn interval(e: &ArithExpr) -> Interval {
    use ExprKind::*;
    match e.kind() {
        Cst(c) => point(*c as i128),
        Var { range, .. } => {
            let lo = interval(&range.min).lo;
            let hi = match &range.max_excl {
                Some(m) => add_ext(interval(m).hi, Fin(-1), false),
                None => PosInf,
            };
            Interval { lo, hi }
        }
        Sum(ts) => ts.iter().fold(point(0), |acc, t| iadd(acc, interval(t))),
        Prod(fs) => fs.iter().fold(point(1), |acc, t| imul(acc, interval(t))),
        Div(a, b) | ExactDiv(a, b) => idiv(interval(a), interval(b)),
        Mod(a, b) => imod(interval(a), interval(b)),
        Pow(a, b) => ipow(interval(a), interval(b)),
        Min(a, b) => {
            let (x, y) = (interval(a), interval(b));
            Interval {
                lo: x.lo.min(y.lo),
                hi: x.hi.min(y.hi),
            }
        }
        Max(a, b) => {
            let (x, y) = (interval(a), interval(b));
            Interval {
                lo: x.lo.max(y.lo),
                hi: x.hi.max(y.hi),
            }
        }
        RawAdd(a, b) => iadd(interval(a), interval(b)),
        RawSub(a, b) => iadd(interval(a), ineg(interval(b))),
        RawMul(a, b) => imul(interval(a), interval(b)),
    }
}

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Proofs build expressions, which may run the simplifier, which may prove;
/// this bounds that recursion.
const MAX_DEPTH: u32 = 3;
const MAX_STEPS: usize = 6;

struct DepthGuard;
impl DepthGuard {
    fn enter() -> Option<DepthGuard> {
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH {
                None
            } else {
                d.set(d.get() + 1);
                Some(DepthGuard)
            }
        })
    }
}
impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

fn contains(e: &ArithExpr, a: &ArithExpr) -> bool {
    if e == a {
        return true;
    }
    if let ExprKind::Var { range, .. } = e.kind() {
        return contains(&range.min, a) || range.max_excl.as_ref().is_some_and(|m| contains(m, a));
    }
    let mut found = false;
    e.for_each_child(&mut |c| found = found || contains(c, a));
    found
}

/// Symbolic lower bound of an atom, valid for every valuation.
fn sym_lo(a: &ArithExpr) -> Option<ArithExpr> {
    match a.kind() {
        ExprKind::Var { range, .. } => Some(range.min.clone()),
        ExprKind::Mod(x, d) | ExprKind::Div(x, d) | ExprKind::ExactDiv(x, d)
            if interval(x).lo >= Fin(0) && interval(d).lo >= Fin(1) =>
        {
            Some(ArithExpr::cst(0))
        }
        _ => None,
    }
}

/// Symbolic inclusive upper bound of an atom, valid for every valuation.
fn sym_hi(a: &ArithExpr) -> Option<ArithExpr> {
    let one = ArithExpr::cst(1);
    match a.kind() {
        ExprKind::Var { range, .. } => range.max_excl.as_ref().map(|m| m.sub(&one)),
        ExprKind::Mod(x, d) if interval(x).lo >= Fin(0) && interval(d).lo >= Fin(1) => Some(d.sub(&one)),
        ExprKind::Div(x, d) | ExprKind::ExactDiv(x, d) if interval(x).lo >= Fin(0) && interval(d).lo >= Fin(1) => {
            let m = x.as_var()?.1.max_excl.as_ref()?;
            // x <= m-1; when m == q*d (and the range is non-empty, so m >= 1)
            // floor((q*d - 1)/d) == q - 1.
            match m.exact_div(d) {
                Some(q) => Some(q.sub(&one)),
                None => Some(m.sub(&one).div(d)),
            }
        }
        _ => None,
    }
}

pub(crate) fn prove_nonneg(e: &ArithExpr) -> bool {
    if interval(e).lo >= Fin(0) {
        return true;
    }
    let Some(_guard) = DepthGuard::enter() else {
        return false;
    };
    let mut cur = e.clone();
    for _ in 0..MAX_STEPS {
        let p = Poly::from_expr(&cur);
        let atoms = p.atoms();
        let mut cands: Vec<(ArithExpr, ArithExpr)> = Vec::new();
        for a in &atoms {
            let Some((c, d)) = p.split_linear(a) else {
                continue;
            };
            let ci = interval(&c.to_expr());
            let bound = if ci.lo >= Fin(0) {
                sym_lo(a)
            } else if ci.hi <= Fin(0) {
                sym_hi(a)
            } else {
                None
            };
            let Some(bound) = bound else { continue };
            let Some(cb) = c.checked_mul(&Poly::from_expr(&bound)) else {
                continue;
            };
            let Some(next) = cb.checked_add(&d) else {
                continue;
            };
            cands.push((a.clone(), crate::simplify::finish_poly(next)));
        }
        // Eliminate an atom that no other atom depends on first (a loop index
        // before the size its range mentions), else precision is lost.
        let pick = cands
            .iter()
            .position(|(a, _)| !atoms.iter().any(|b| b != a && contains(b, a)))
            .or(if cands.is_empty() { None } else { Some(0) });
        let Some(i) = pick else { return false };
        cur = cands.swap_remove(i).1;
        if interval(&cur).lo >= Fin(0) {
            return true;
        }
    }
    false
}
