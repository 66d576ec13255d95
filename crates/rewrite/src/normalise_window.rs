//! Normalisation of a map over an index array that reads a window of an array by index
//! arithmetic into a map over the windows.
//!
//! **Window index** (`k` bound inside `B` by a map over the index array `generate m (λx. x)`):
//!
//! `map (λi. B[at (+ i k) a]) (generate n (λj. j))` = `map (λw. B[at k w]) (slide m 1 a)`.
//!
//! Side conditions: every use of `i` in `B` is such an `at (+ i k) a` (or `(+ k i)`), all with
//! the one `k` and the one array `a`; `a` reads neither `i` nor a variable bound inside `B`; and
//! `a` has length `n + m - 1`, so that window `i` of `slide m 1 a` is `a[i .. i + m)` for every
//! `i < n` and its element `k < m` is `a[i + k]`.
//!
//! Why: a stencil written with explicit indices (a convolution's `at (+ j k) padded`, taps `k`
//! of a `generate #17`) is a random read to the rules, one work-item per output reading its
//! taps from global memory (the separable convolution so written ran 147× slower than with
//! `slide`, its column pass did not finish: `bench/results/forms-fixes-nvidia-h200-2026-12-02.md`);
//! with the windows, the map over `k` is a map over the window (zipped with the weights, by
//! `normalise_index`), and the stencil rules tile it. The pass runs within the index-array
//! pass, which it then runs again over the result.

use super::{free_vars, same, t, Cx, N, T};
use arith::ArithExpr;
use ir::{Op, Prim, Type, VarId};
use std::collections::BTreeSet;

impl Cx<'_> {
    /// The window-index equality of the module doc at the root of `e`, if it applies.
    pub(super) fn window_index(&mut self, e: &T) -> Option<T> {
        let span = e.span;
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &e.n else {
            return None;
        };
        let N::Prim(Prim::Generate(n), g) = &m[1].n else {
            return None;
        };
        let N::Lambda(js, jb) = &g[0].n else { return None };
        let N::Lambda(is, body) = &m[0].n else { return None };
        if js.len() != 1 || !matches!(jb.n, N::Var(v) if v == js[0]) || is.len() != 1 {
            return None;
        }
        let i = is[0];
        let mut found: Option<(VarId, T)> = None;
        if !windowed(body, i, &mut found) {
            return None;
        }
        let (k, a) = found?;
        let taps = index_map_len(body, k)?;
        let mut bound = BTreeSet::new();
        binders(body, &mut bound);
        let mut fv = BTreeSet::new();
        free_vars(&a, &mut vec![], &mut fv);
        if fv.contains(&i) || fv.iter().any(|v| bound.contains(v)) {
            return None;
        }
        let Some(Type::Array(el, len)) = self.type_of(&a) else {
            return None;
        };
        if len != n.add(&taps).sub(&ArithExpr::cst(1)) {
            return None;
        }
        self.changed = true;
        let w = self.fresh("window", span);
        self.types.push((w, Type::Array(el, taps.clone())));
        let body = rewindow(body, i, k, w);
        let slide = Prim::Slide(taps, ArithExpr::cst(1));
        let windows = t(N::Prim(slide, vec![a]), span);
        let f = t(N::Lambda(vec![w], Box::new(body)), span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, windows]), span))
    }
}

/// `k` for `(+ i k)` or `(+ k i)`, `k` a variable other than `i`.
fn offset(e: &T, i: VarId) -> Option<VarId> {
    let N::Op(Op::Add, a) = &e.n else { return None };
    match (&a[0].n, &a[1].n) {
        (N::Var(x), N::Var(k)) | (N::Var(k), N::Var(x)) if *x == i && *k != i => Some(*k),
        _ => None,
    }
}

/// Whether every use of `i` in `e` is `at (+ i k) a` with the one `(k, a)` (recorded in `found`).
fn windowed(e: &T, i: VarId, found: &mut Option<(VarId, T)>) -> bool {
    if let N::Op(Op::At, a) = &e.n {
        if let Some(k) = offset(&a[0], i) {
            return match found {
                Some((k0, a0)) => *k0 == k && same(a0, &a[1]),
                None => {
                    *found = Some((k, a[1].clone()));
                    true
                }
            } && windowed(&a[1], i, found);
        }
    }
    match &e.n {
        N::Var(v) => *v != i,
        N::Lit(_) => true,
        N::Lambda(_, b) | N::Pack(b) => windowed(b, i, found),
        N::Prim(_, a) | N::Op(_, a) => a.iter().all(|a| windowed(a, i, found)),
        N::If(b) => b.iter().all(|a| windowed(a, i, found)),
        N::Let(_, _, v, b) => windowed(v, i, found) && windowed(b, i, found),
    }
}

/// The length `m` of the index array `generate m (λx. x)` that a map in `e` binds `k` over.
fn index_map_len(e: &T, k: VarId) -> Option<ArithExpr> {
    if let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &e.n {
        if let (N::Lambda(ks, _), N::Prim(Prim::Generate(len), g)) = (&m[0].n, &m[1].n) {
            let ident =
                matches!(&g[0].n, N::Lambda(xs, xb) if xs.len() == 1 && matches!(xb.n, N::Var(v) if v == xs[0]));
            if ks.len() == 1 && ks[0] == k && ident {
                return Some(len.clone());
            }
        }
    }
    match &e.n {
        N::Var(_) | N::Lit(_) => None,
        N::Lambda(_, b) | N::Pack(b) => index_map_len(b, k),
        N::Prim(_, a) | N::Op(_, a) => a.iter().find_map(|a| index_map_len(a, k)),
        N::If(b) => b.iter().find_map(|a| index_map_len(a, k)),
        N::Let(_, _, v, b) => index_map_len(v, k).or_else(|| index_map_len(b, k)),
    }
}

/// The variables bound inside `e` (lambda parameters and `let`s).
fn binders(e: &T, out: &mut BTreeSet<VarId>) {
    match &e.n {
        N::Var(_) | N::Lit(_) => {}
        N::Lambda(ps, b) => {
            out.extend(ps.iter().copied());
            binders(b, out);
        }
        N::Pack(b) => binders(b, out),
        N::Prim(_, a) | N::Op(_, a) => a.iter().for_each(|a| binders(a, out)),
        N::If(b) => b.iter().for_each(|a| binders(a, out)),
        N::Let(_, v, val, b) => {
            out.insert(*v);
            binders(val, out);
            binders(b, out);
        }
    }
}

/// `e` with every `at (+ i k) a` replaced by `at k w`.
fn rewindow(e: &T, i: VarId, k: VarId, w: VarId) -> T {
    let span = e.span;
    if let N::Op(Op::At, a) = &e.n {
        if offset(&a[0], i).is_some() {
            return t(N::Op(Op::At, vec![t(N::Var(k), span), t(N::Var(w), span)]), span);
        }
    }
    let n = match &e.n {
        N::Lambda(ps, b) => N::Lambda(ps.clone(), Box::new(rewindow(b, i, k, w))),
        N::Prim(p, a) => N::Prim(p.clone(), a.iter().map(|a| rewindow(a, i, k, w)).collect()),
        N::Op(o, a) => N::Op(*o, a.iter().map(|a| rewindow(a, i, k, w)).collect()),
        N::If(b) => N::If(Box::new([
            rewindow(&b[0], i, k, w),
            rewindow(&b[1], i, k, w),
            rewindow(&b[2], i, k, w),
        ])),
        N::Let(l, v, val, b) => N::Let(*l, *v, Box::new(rewindow(val, i, k, w)), Box::new(rewindow(b, i, k, w))),
        N::Pack(a) => N::Pack(Box::new(rewindow(a, i, k, w))),
        n => n.clone(),
    };
    t(n, span)
}
