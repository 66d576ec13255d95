//! Normalisation of a scalar program result taken from a one-element reduction.
//!
//! **`at 0` of a host-level reduction** (the program's result, or bound with `let` and used in
//! scalar arithmetic at host level):
//!
//! `B[at 0 R]` = `let r R (at 0 r)` when `B` is `at 0 R` itself (a `let s (at 0 R) s` included),
//! and `B[at 0 R]` = `let r R (let q (map (λs. B[s]) r) (at 0 q))` otherwise.
//!
//! Side conditions: `R` is a reduction (or a map of one) reading only the program's
//! parameters, it is the only such `R` in `B`, and `B[s]` is scalar arithmetic (no array
//! primitive, no lambda), so that mapping it over the one element computes it once.
//!
//! Why: encoding keeps a scalar expression opaque, so `at 0 (reduce …)` as a whole program is
//! one leaf of the e-graph and no reduction rule sees the reduction (it ran in one work-item);
//! bound with `let`, the reduction is a node of its own and gets every variant that
//! `(reduce f z xs)` gets, and only the final element is read on the host. The pass runs after
//! the other equalities (whose `let`-inlining would undo the binding).

use super::{collect_at0, free_vars, replace_at0, subst, t, Cx, N, T};
use ir::{LetKind, Lit, Op, Prim};
use std::collections::BTreeSet;

impl Cx<'_> {
    /// The program's body with a scalar result from a one-element reduction bound as above;
    /// the body unchanged when the side conditions do not hold.
    pub(super) fn scalar_result(&mut self, body: T) -> T {
        // `at 0 (let r R (map g r))`, as the host-level map of a reduction is bound, is
        // `let r R (let q (map g r) (at 0 q))`
        if let Some(e) = self.hoist_at0(&body) {
            return e;
        }
        let mut found = vec![];
        collect_at0(&body, &mut BTreeSet::new(), &mut found);
        if found.len() != 1 {
            return body;
        }
        let r = found.remove(0);
        let mut fv = BTreeSet::new();
        free_vars(&r, &mut vec![], &mut fv);
        if fv.iter().any(|v| !self.is_param(*v)) {
            return body;
        }
        let span = body.span;
        let s = self.fresh("elem", span);
        let rest = trivial_lets(replace_at0(body.clone(), &r, &t(N::Var(s), span)));
        if !scalar_arithmetic(&rest) {
            return body;
        }
        self.changed = true;
        let at0 = |x| t(N::Op(Op::At, vec![t(N::Lit(Lit::Int(0)), span), x]), span);
        if matches!(rest.n, N::Var(v) if v == s) {
            let (wrap, last) = self.bind(r);
            return wrap(at0(t(N::Var(last), span)));
        }
        let (wrap, last) = self.bind(r);
        let q = self.fresh("mapped", span);
        let g = t(N::Lambda(vec![s], Box::new(rest)), span);
        let mapped = t(
            N::Prim(Prim::Map(ir::MapKind::Plain), vec![g, t(N::Var(last), span)]),
            span,
        );
        let inner = t(
            N::Let(LetKind::Let, q, Box::new(mapped), Box::new(at0(t(N::Var(q), span)))),
            span,
        );
        wrap(inner)
    }

    /// `at 0 (let r R M)` with `M` a map: `let r R (let q M (at 0 q))`.
    fn hoist_at0(&mut self, body: &T) -> Option<T> {
        let span = body.span;
        let N::Op(Op::At, a) = &body.n else { return None };
        let N::Let(LetKind::Let, r, red, m) = &a[1].n else {
            return None;
        };
        if !matches!(a[0].n, N::Lit(Lit::Int(0)))
            || !matches!(red.n, N::Prim(Prim::Reduce(ir::ReduceKind::Plain), _))
            || !matches!(m.n, N::Prim(Prim::Map(ir::MapKind::Plain), _))
        {
            return None;
        }
        self.changed = true;
        let q = self.fresh("mapped", span);
        let at0 = t(N::Op(Op::At, vec![a[0].clone(), t(N::Var(q), span)]), span);
        let inner = t(N::Let(LetKind::Let, q, m.clone(), Box::new(at0)), span);
        Some(t(N::Let(LetKind::Let, *r, red.clone(), Box::new(inner)), span))
    }

    /// Whether `v` is one of the program's parameters.
    fn is_param(&self, v: ir::VarId) -> bool {
        self.prog.params.iter().any(|p| p.var == v)
    }

    /// `R` bound with `let` a step at a time (`map g (reduce …)` as the reduction, then its
    /// map, each a host-level value): a function wrapping a body in the `let`s, and the last
    /// variable bound.
    fn bind(&mut self, r: T) -> (Box<dyn FnOnce(T) -> T>, ir::VarId) {
        let span = r.span;
        match r.n {
            N::Prim(Prim::Map(ir::MapKind::Plain), mut a) if a.len() == 2 => {
                let x = a.pop().expect("two arguments");
                let g = a.pop().expect("two arguments");
                let (outer, xv) = self.bind(x);
                let m = self.fresh("mapped", span);
                let mapped = t(
                    N::Prim(Prim::Map(ir::MapKind::Plain), vec![g, t(N::Var(xv), span)]),
                    span,
                );
                let wrap = move |b: T| outer(t(N::Let(LetKind::Let, m, Box::new(mapped), Box::new(b)), span));
                (Box::new(wrap), m)
            }
            n => {
                let v = self.fresh("reduced", span);
                let val = t(n, span);
                let wrap = move |b: T| t(N::Let(LetKind::Let, v, Box::new(val), Box::new(b)), span);
                (Box::new(wrap), v)
            }
        }
    }
}

/// `e` with every `let v x b`, `x` a variable, replaced by `b[x/v]` (a renaming).
fn trivial_lets(e: T) -> T {
    let span = e.span;
    match e.n {
        N::Let(_, v, val, body) if matches!(val.n, N::Var(_)) => trivial_lets(subst(*body, v, &val)),
        N::Let(k, v, val, body) => t(N::Let(k, v, val, Box::new(trivial_lets(*body))), span),
        n => t(n, span),
    }
}

/// Whether `e` is scalar arithmetic: no array primitive, no lambda.
fn scalar_arithmetic(e: &T) -> bool {
    match &e.n {
        N::Var(_) | N::Lit(_) => true,
        N::Lambda(..) | N::Prim(..) | N::Pack(_) => false,
        N::Op(_, a) => a.iter().all(scalar_arithmetic),
        N::If(b) => b.iter().all(scalar_arithmetic),
        N::Let(_, _, v, b) => scalar_arithmetic(v) && scalar_arithmetic(b),
    }
}
