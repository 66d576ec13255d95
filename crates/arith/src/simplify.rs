//! Simplification of the non-polynomial operations, and the sum-level
//! modulo identity.
//!
//! Every rule below is either an identity of C integer arithmetic for all
//! operands with a non-zero divisor, or guarded by a proof of its side
//! condition. The divisor being provably non-zero is required by all of them,
//! so that a division by zero is never simplified away.

use crate::poly::{gcd, Mono, Poly};
use crate::{ArithExpr, ExprKind};

/// Exponents up to this expand into products.
const MAX_EXPAND_POW: i64 = 16;
/// Bounds the modulo-identity rewriting of one sum.
const MAX_MOD_REWRITES: usize = 8;

#[cfg(test)]
thread_local! {
    /// Calls of [`div`] and [`rem`] on this thread: tests bound the work of a simplification
    /// by it, which is deterministic where its time is not.
    pub(crate) static DIV_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn cst(c: i64) -> ArithExpr {
    ArithExpr::cst(c)
}

/// Builds the canonical expression of a polynomial, after folding
/// `c*R*((a/b)*b) + c*R*(a%b)` back into `c*R*a`.
pub(crate) fn finish_poly(p: Poly) -> ArithExpr {
    let p = cancel_exact_quotients(p);
    let p = if p.terms.len() >= 2 { mod_identity(p) } else { p };
    p.to_expr()
}

fn is_exact_quot(a: &ArithExpr) -> bool {
    matches!(a.kind(), ExprKind::ExactDiv(..))
}

/// `r*d * (x /^ d) == r*x`: the quotient is exact by assertion.
fn cancel_exact_quotients(mut p: Poly) -> Poly {
    'outer: for _ in 0..MAX_MOD_REWRITES {
        if !p.terms.keys().any(|m| m.iter().any(is_exact_quot)) {
            return p;
        }
        let monos: Vec<(Mono, i64)> = p.terms.iter().map(|(m, c)| (m.clone(), *c)).collect();
        for (m, c) in monos {
            for (i, atom) in m.iter().enumerate() {
                let ExprKind::ExactDiv(x, d) = atom.kind() else {
                    continue;
                };
                let mut rest = m.clone();
                rest.remove(i);
                let Some(r) = exact_div(&Poly::mono(c, rest).to_expr(), d) else {
                    continue;
                };
                let replaced = Poly::from_expr(&r)
                    .checked_mul(&Poly::from_expr(x))
                    .and_then(|rx| p.checked_sub(&Poly::mono(c, m.clone()))?.checked_add(&rx));
                if let Some(q) = replaced {
                    p = q;
                    continue 'outer;
                }
            }
        }
        return p;
    }
    p
}

/// `a /^ d`, see [`ArithExpr::div_assume_exact`].
pub(crate) fn exact_quot(a: &ArithExpr, d: &ArithExpr) -> ArithExpr {
    let node = || ArithExpr::mk(ExprKind::ExactDiv(a.clone(), d.clone()));
    if let (Some(x), Some(y)) = (a.as_cst(), d.as_cst()) {
        return x.checked_div(y).map(cst).unwrap_or_else(node);
    }
    if d.is_cst(1) {
        return a.clone();
    }
    if d.is_cst(-1) {
        return a.neg();
    }
    if !d.prove_nonzero() {
        return node();
    }
    if let Some(q) = exact_div(a, d) {
        return q;
    }
    if let Some((na, nd, _)) = cancel_common(a, d) {
        return exact_quot(&na, &nd);
    }
    if let ExprKind::ExactDiv(x, c) = a.kind() {
        return exact_quot(x, &c.mul(d));
    }
    let nd = d.neg();
    if nd.prove_positive() {
        return exact_quot(a, &nd).neg();
    }
    node()
}

fn is_mod(a: &ArithExpr) -> bool {
    matches!(a.kind(), ExprKind::Mod(..))
}

fn is_div(a: &ArithExpr) -> bool {
    matches!(a.kind(), ExprKind::Div(..))
}

/// `(a/b)*b + a%b == a` holds in C for every `a` and non-zero `b`.
fn mod_identity(mut p: Poly) -> Poly {
    'outer: for _ in 0..MAX_MOD_REWRITES {
        // The pattern's quotient term holds a division; without one, nothing can match, and
        // building `a/b` for every remainder to find out costs time exponential in the
        // nesting of remainders.
        if !p.terms.keys().any(|m| m.iter().any(is_mod)) || !p.terms.keys().any(|m| m.iter().any(is_div)) {
            return p;
        }
        let monos: Vec<(Mono, i64)> = p.terms.iter().map(|(m, c)| (m.clone(), *c)).collect();
        for (m, c) in monos {
            for (i, atom) in m.iter().enumerate() {
                let ExprKind::Mod(a, b) = atom.kind() else {
                    continue;
                };
                if i > 0 && m[i - 1] == *atom {
                    continue;
                }
                let mut rest = m.clone();
                rest.remove(i);
                let Some(q) = try_mod_identity(&p, c, &rest, atom, a, b) else {
                    continue;
                };
                p = q;
                continue 'outer;
            }
        }
        return p;
    }
    p
}

fn try_mod_identity(p: &Poly, c: i64, rest: &Mono, modulo: &ArithExpr, a: &ArithExpr, b: &ArithExpr) -> Option<Poly> {
    let scale = Poly::mono(c, rest.clone());
    let div_ab = div(a, b);
    let whole = Poly::from_expr(&div_ab)
        .checked_mul(&Poly::from_expr(b))?
        .checked_add(&Poly::from_expr(modulo))?;
    let pat = scale.checked_mul(&whole)?;
    // Only rewrite when every monomial of the pattern is present with at
    // least the same weight, so the rewrite removes the div/mod terms.
    let present = pat.terms.iter().all(|(m, pc)| {
        p.terms
            .get(m)
            .is_some_and(|&have| (have > 0) == (*pc > 0) && have.unsigned_abs() >= pc.unsigned_abs())
    });
    if !present || !b.prove_nonzero() {
        return None;
    }
    p.checked_sub(&pat)?
        .checked_add(&scale.checked_mul(&Poly::from_expr(a))?)
}

pub(crate) fn exact_div(a: &ArithExpr, d: &ArithExpr) -> Option<ArithExpr> {
    let pd = Poly::from_expr(d);
    if pd.terms.is_empty() {
        return None;
    }
    let pa = Poly::from_expr(a);
    if pa.terms.is_empty() {
        return Some(cst(0));
    }
    if a == d {
        return Some(cst(1));
    }
    if pd.terms.len() == 1 {
        let (dm, dc) = pd.terms.iter().next()?;
        let q = pa.div_mono(dm)?.div_const(*dc)?;
        return Some(q.to_expr());
    }
    // Polynomial long division by the largest monomial of `d` (graded), with
    // a bounded number of steps; the result is verified by multiplying back,
    // so the ordering only matters for completeness.
    let lead = |p: &Poly| -> Option<(Mono, i64)> {
        p.terms
            .iter()
            .max_by(|x, y| x.0.len().cmp(&y.0.len()).then_with(|| x.0.cmp(y.0)))
            .map(|(m, c)| (m.clone(), *c))
    };
    let (dm, dc) = lead(&pd)?;
    let mut r = pa.clone();
    let mut q = Poly::default();
    for _ in 0..32 {
        let Some((rm, rc)) = lead(&r) else { break };
        let qm = crate::poly::mono_div(&rm, &dm)?;
        if rc.checked_rem(dc)? != 0 {
            return None;
        }
        let qt = Poly::mono(rc.checked_div(dc)?, qm);
        r = r.checked_sub(&qt.checked_mul(&pd)?)?;
        q = q.checked_add(&qt)?;
    }
    if !r.terms.is_empty() || q.checked_mul(&pd)? != pa {
        return None;
    }
    Some(q.to_expr())
}

fn node_div(a: &ArithExpr, b: &ArithExpr) -> ArithExpr {
    ArithExpr::mk(ExprKind::Div(a.clone(), b.clone()))
}

fn node_mod(a: &ArithExpr, b: &ArithExpr) -> ArithExpr {
    ArithExpr::mk(ExprKind::Mod(a.clone(), b.clone()))
}

/// Divides out the constant content and atoms common to both operands
/// (non-zero atoms only). `a/b == (a/g)/(b/g)` and `a%b == g*((a/g)%(b/g))`
/// for any non-zero `g` dividing both.
fn cancel_common(a: &ArithExpr, b: &ArithExpr) -> Option<(ArithExpr, ArithExpr, ArithExpr)> {
    let (pa, pb) = (Poly::from_expr(a), Poly::from_expr(b));
    if pa.terms.is_empty() || pb.terms.is_empty() {
        return None;
    }
    let g = gcd(pa.content(), pb.content());
    let g = i64::try_from(g).ok().filter(|&g| g > 1).unwrap_or(1);
    let common: Mono = {
        let ca = pa.common_atoms();
        let cb = pb.common_atoms();
        let mut both = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < ca.len() && j < cb.len() {
            match ca[i].cmp(&cb[j]) {
                std::cmp::Ordering::Equal => {
                    if ca[i].prove_nonzero() {
                        both.push(ca[i].clone());
                    }
                    i += 1;
                    j += 1;
                }
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        both
    };
    if g == 1 && common.is_empty() {
        return None;
    }
    let na = pa.div_mono(&common)?.div_const(g)?;
    let nb = pb.div_mono(&common)?.div_const(g)?;
    Some((na.to_expr(), nb.to_expr(), Poly::mono(g, common).to_expr()))
}

/// Splits a sum into the terms that are multiples of `b` (divided by `b`)
/// and the rest; with a constant `b > 0` the constant term is reduced into
/// `[0, b)` as well. Returns `(quotient, remainder)` with `a == q*b + r`.
fn split_multiples(a: &ArithExpr, b: &ArithExpr) -> Option<(ArithExpr, ArithExpr)> {
    let pa = Poly::from_expr(a);
    let mut q = cst(0);
    let mut r = cst(0);
    for (m, c) in &pa.terms {
        let t = Poly::mono(*c, m.clone()).to_expr();
        if let (true, Some(k)) = (m.is_empty(), b.as_cst()) {
            if k > 0 {
                q = q.add(&cst(c.div_euclid(k)));
                r = r.add(&cst(c.rem_euclid(k)));
                continue;
            }
        }
        match exact_div(&t, b) {
            Some(qt) => q = q.add(&qt),
            None => r = r.add(&t),
        }
    }
    (!q.is_cst(0)).then_some((q, r))
}

/// A divisor `b = a·c` and a dividend `x = a·l + q` with `a ≥ 2` a constant, `l ≥ 0` and
/// `0 ≤ q < a` (all proved): `(a, l, q, c)`. Then `x / b == l / c` and `x % b == a·(l % c) + q`,
/// since `⌊(a·l + q)/(a·c)⌋ = ⌊⌊(a·l + q)/a⌋/c⌋ = ⌊l/c⌋` (floor is C's truncation here, all
/// being non-negative). This is the index of lane `q` of vector `l` read as `b`-long rows
/// (`(4·l + q) / 8` is `l / 2`: the four lanes lie in one row, adjacent), which
/// `split_multiples` (`a == b` only) does not see. The candidates for `a` are the common
/// factors of `b`'s content with each term's coefficient, largest first; a term whose
/// coefficient `a` divides goes to `l`, the others (and the constant's remainder) to `q`.
fn split_by_factor(x: &ArithExpr, b: &ArithExpr) -> Option<(i64, ArithExpr, ArithExpr, ArithExpr)> {
    let (px, pb) = (Poly::from_expr(x), Poly::from_expr(b));
    let content = pb.content();
    if content < 2 || px.terms.is_empty() {
        return None;
    }
    let mut cands: Vec<u64> = px
        .terms
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .map(|(_, c)| gcd(content, c.unsigned_abs()))
        .filter(|&g| g >= 2)
        .collect();
    cands.sort_unstable_by(|a, b| b.cmp(a));
    cands.dedup();
    for a in cands {
        let a = i64::try_from(a).ok()?;
        let (mut l, mut q) = (cst(0), cst(0));
        for (m, c) in &px.terms {
            if m.is_empty() {
                l = l.add(&cst(c.div_euclid(a)));
                q = q.add(&cst(c.rem_euclid(a)));
            } else if c % a == 0 {
                l = l.add(&Poly::mono(c / a, m.clone()).to_expr());
            } else {
                q = q.add(&Poly::mono(*c, m.clone()).to_expr());
            }
        }
        // side condition: l ≥ 0 and 0 ≤ q < a, so that the rule is floor division's
        if l.is_cst(0) || !l.prove_nonneg() || !q.prove_nonneg() || !q.prove_lt(&cst(a)) {
            continue;
        }
        let c = exact_div(b, &cst(a))?;
        return Some((a, l, q, c));
    }
    None
}

pub(crate) fn div(a: &ArithExpr, b: &ArithExpr) -> ArithExpr {
    #[cfg(test)]
    DIV_CALLS.with(|c| c.set(c.get() + 1));
    if let (Some(x), Some(y)) = (a.as_cst(), b.as_cst()) {
        return match x.checked_div(y) {
            Some(q) => cst(q),
            None => node_div(a, b),
        };
    }
    if b.is_cst(1) {
        return a.clone();
    }
    if b.is_cst(-1) {
        return a.neg();
    }
    if !b.prove_nonzero() {
        return node_div(a, b);
    }
    if a.is_cst(0) {
        return cst(0);
    }
    if a == b {
        return cst(1);
    }
    if let Some(q) = exact_div(a, b) {
        return q;
    }
    // |x % b| < |b|, so the quotient truncates to 0.
    if let ExprKind::Mod(_, d) = a.kind() {
        if d == b {
            return cst(0);
        }
    }
    if let Some((na, nb, _)) = cancel_common(a, b) {
        return div(&na, &nb);
    }
    // Truncation is odd in both operands: normalise to positive divisor and
    // non-negative dividend where the signs are known.
    if !b.prove_positive() {
        let nb = b.neg();
        if nb.prove_positive() {
            return div(a, &nb).neg();
        }
        return node_div(a, b);
    }
    let a_nonneg = a.prove_nonneg();
    if !a_nonneg && a.neg().prove_nonneg() {
        return div(&a.neg(), b).neg();
    }
    if a_nonneg && a.prove_lt(b) {
        return cst(0);
    }
    // (x/c)/b == x/(c*b) for c, b > 0 (for any x, by oddness of truncation).
    if let ExprKind::Div(x, c) | ExprKind::ExactDiv(x, c) = a.kind() {
        if c.prove_positive() {
            return div(x, &c.mul(b));
        }
    }
    // (q*b + r)/b == q + r/b when a >= 0 and r >= 0 (floor == truncation).
    if a_nonneg {
        if let Some((q, r)) = split_multiples(a, b) {
            if r.prove_nonneg() {
                return q.add(&div(&r, b));
            }
        }
        // (a·l + q)/(a·c) == l/c when l ≥ 0, 0 ≤ q < a
        if let Some((_, l, _, c)) = split_by_factor(a, b) {
            return div(&l, &c);
        }
    }
    node_div(a, b)
}

pub(crate) fn rem(a: &ArithExpr, b: &ArithExpr) -> ArithExpr {
    #[cfg(test)]
    DIV_CALLS.with(|c| c.set(c.get() + 1));
    if let (Some(x), Some(y)) = (a.as_cst(), b.as_cst()) {
        return match x.checked_rem(y) {
            Some(r) => cst(r),
            None => node_mod(a, b),
        };
    }
    if b.is_cst(1) || b.is_cst(-1) {
        return cst(0);
    }
    if !b.prove_nonzero() {
        return node_mod(a, b);
    }
    if a.is_cst(0) || a == b || exact_div(a, b).is_some() {
        return cst(0);
    }
    // (x % d) % b == x % d when d is a multiple of b (any sign of x).
    if let ExprKind::Mod(x, d) = a.kind() {
        if d == b {
            return a.clone();
        }
        if exact_div(d, b).is_some() && d.prove_nonzero() {
            return rem(x, b);
        }
    }
    // a % -b == a % b in C.
    if !b.prove_positive() {
        let nb = b.neg();
        if nb.prove_positive() {
            return rem(a, &nb);
        }
        return node_mod(a, b);
    }
    let a_nonneg = a.prove_nonneg();
    if !a_nonneg && a.neg().prove_nonneg() {
        // (-x) % b == -(x % b) in C.
        return rem(&a.neg(), b).neg();
    }
    if a_nonneg && a.prove_lt(b) {
        return a.clone();
    }
    // (q*b + r) % b == r % b when a >= 0 and r >= 0.
    if a_nonneg {
        if let Some((_, r)) = split_multiples(a, b) {
            if r.prove_nonneg() {
                return rem(&r, b);
            }
        }
        // (a·l + q) % (a·c) == a·(l % c) + q when l ≥ 0, 0 ≤ q < a
        if let Some((f, l, q, c)) = split_by_factor(a, b) {
            return rem(&l, &c).mul(&cst(f)).add(&q);
        }
    }
    // Only factor out common parts when that lets the remainder fold.
    if let Some((na, nb, g)) = cancel_common(a, b) {
        let r = rem(&na, &nb);
        if !matches!(r.kind(), ExprKind::Mod(..)) {
            return g.mul(&r);
        }
    }
    node_mod(a, b)
}

pub(crate) fn pow(a: &ArithExpr, e: &ArithExpr) -> ArithExpr {
    let node = || ArithExpr::mk(ExprKind::Pow(a.clone(), e.clone()));
    match e.as_cst() {
        Some(0) => cst(1),
        Some(1) => a.clone(),
        Some(n) if n > 0 => {
            if let Some(x) = a.as_cst() {
                return u32::try_from(n)
                    .ok()
                    .and_then(|n| x.checked_pow(n))
                    .map(cst)
                    .unwrap_or_else(node);
            }
            if n > MAX_EXPAND_POW {
                return node();
            }
            let mut acc = Poly::constant(1);
            let pa = Poly::from_expr(a);
            for _ in 0..n {
                match acc.checked_mul(&pa) {
                    Some(p) => acc = p,
                    None => return node(),
                }
            }
            finish_poly(acc)
        }
        _ => {
            if (a.is_cst(1) && e.prove_nonneg()) || (a.is_cst(0) && e.prove_positive()) {
                return a.clone();
            }
            node()
        }
    }
}

pub(crate) fn min_max(a: &ArithExpr, b: &ArithExpr, is_min: bool) -> ArithExpr {
    if let (Some(x), Some(y)) = (a.as_cst(), b.as_cst()) {
        return cst(if is_min { x.min(y) } else { x.max(y) });
    }
    if a == b {
        return a.clone();
    }
    if a.prove_le(b) {
        return if is_min { a.clone() } else { b.clone() };
    }
    if b.prove_le(a) {
        return if is_min { b.clone() } else { a.clone() };
    }
    let (x, y) = if a <= b {
        (a.clone(), b.clone())
    } else {
        (b.clone(), a.clone())
    };
    ArithExpr::mk(if is_min {
        ExprKind::Min(x, y)
    } else {
        ExprKind::Max(x, y)
    })
}
