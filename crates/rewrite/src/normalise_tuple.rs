//! Reductions taken together, both ways: two reductions of one array are one reduction of
//! pairs, and a reduction of pairs combined component by component is two reductions.
//!
//! `zip (reduce f0 z0 (map g0 xs)) (reduce f1 z1 (map g1 xs))` =
//! `reduce (λ(u v). tuple (f0 (get #0 u) (get #0 v)) (f1 (get #1 u) (get #1 v))) (tuple z0 z1)
//! (map (λx. tuple (g0 x) (g1 x)) xs)` (a missing `map` is the identity).
//!
//! Which side is faster depends on the sizes: one pass over the array in each work-item (mri-q,
//! a reduction per point of a large grid) or one work-group reduction each (gesummv, a row of
//! 8192 per work-group, which no work-group rule makes of a reduction of pairs). So the pass
//! fuses (`fuse_reductions`, the normal form) and `split_reductions` gives the other side as a
//! second program that exploration saturates too; the cost model chooses between their
//! variants.
//!
//! Side conditions: the operators are two-parameter lambdas and the mapped functions one-parameter
//! lambdas; for a split, the operator's components read each parameter only through the
//! projection of their own component, the neutral element is a `tuple`, and the mapped function
//! is a `tuple` under `let`s of scalars (each copied into both).
//!
//! Also here: a computed array bound by `let` inside a lambda and read only outside the body's
//! lambdas (`let angles (map f ks) (tuple (at 0 (reduce … (zip angles m))) …)`) is read where it
//! is used (`inline_elementwise`): otherwise each work-item stores the whole array before it
//! reads it, and with it inlined each use is fused with its consumer.

use super::{subst, t, uses, Cx, N, T};
use ir::{LetKind, Op, Prim, Span, VarId};

#[path = "normalise_lets.rs"]
pub(crate) mod lets;

impl Cx<'_> {
    /// Whether `let v val body` inside a lambda may be read where used: `val` a high-level
    /// `map`, `v` read only outside the lambdas of `body` (so it is computed once for each use,
    /// per element as before).
    pub(super) fn inline_elementwise(&self, v: VarId, val: &T, body: &T) -> bool {
        let (n, under) = uses(body, v, false);
        matches!(val.n, N::Prim(Prim::Map(ir::MapKind::Plain), _)) && super::high_level(val) && n >= 1 && !under
    }

    /// `zip R0 R1` of two reductions of one array, everywhere in `e` (bottom-up): one
    /// reduction of pairs.
    pub(super) fn fuse_reductions(&mut self, e: T) -> T {
        let e = self.map_kids(e, Self::fuse_reductions);
        let span = e.span;
        let N::Prim(Prim::Zip, ops) = &e.n else { return e };
        if ops.len() != 2 {
            return e;
        }
        let (Some((f0, z0, g0, x0)), Some((f1, z1, g1, x1))) = (reduction(&ops[0]), reduction(&ops[1])) else {
            return e;
        };
        if !super::same(x0, x1) {
            return e;
        }
        let (f0, z0, g0, f1, z1, g1, xs) = (
            f0.clone(),
            z0.clone(),
            g0.cloned(),
            f1.clone(),
            z1.clone(),
            g1.cloned(),
            x0.clone(),
        );
        self.changed = true;
        // the operator of pairs
        let (u, v) = (self.fresh("acc", span), self.fresh("elem", span));
        let comp = |cx: &mut Self, f: T, k: u8| {
            let f = cx.refresh(f);
            let N::Lambda(ps, b) = f.n else {
                unreachable!("checked by `reduction`")
            };
            let get = |x: VarId| t(N::Op(Op::Get(k), vec![t(N::Var(x), span)]), span);
            subst(subst(*b, ps[0], &get(u)), ps[1], &get(v))
        };
        let (c0, c1) = (comp(self, f0, 0), comp(self, f1, 1));
        let op = t(N::Lambda(vec![u, v], Box::new(tuple(vec![c0, c1], span))), span);
        // the function of each element
        let x = self.fresh("elem", span);
        let apply = |cx: &mut Self, g: Option<T>| match g {
            None => t(N::Var(x), span),
            Some(g) => {
                let g = cx.refresh(g);
                let N::Lambda(ps, b) = g.n else {
                    unreachable!("checked by `reduction`")
                };
                subst(*b, ps[0], &t(N::Var(x), span))
            }
        };
        let (a0, a1) = (apply(self, g0), apply(self, g1));
        // what both components compute is computed once (`angles` read by both reductions)
        let pair = match common(&a0, &a1) {
            Some(c) => {
                let cv = self.fresh("common", span);
                let var = t(N::Var(cv), span);
                let parts = vec![replace(a0, &c, &var), replace(a1, &c, &var)];
                t(
                    N::Let(LetKind::Let, cv, Box::new(c), Box::new(tuple(parts, span))),
                    span,
                )
            }
            None => tuple(vec![a0, a1], span),
        };
        let g = t(N::Lambda(vec![x], Box::new(pair)), span);
        let mapped = t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![g, xs]), span);
        t(
            N::Prim(
                Prim::Reduce(ir::ReduceKind::Plain),
                vec![op, tuple(vec![z0, z1], span), mapped],
            ),
            span,
        )
    }

    /// A reduction of pairs combined component by component, everywhere in `e`: two reductions,
    /// zipped.
    pub(super) fn split_reductions(&mut self, e: T) -> T {
        let e = self.map_kids(e, Self::split_reductions);
        let span = e.span;
        let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), args) = &e.n else {
            return e;
        };
        let Some((ops, zs)) = pair_operator(&args[0]).zip(pair_of(&args[1])) else {
            return e;
        };
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &args[2].n else {
            return e;
        };
        let N::Lambda(ps, gb) = &m[0].n else { return e };
        let Some((spine, parts)) = pair_body(gb) else { return e };
        if ps.len() != 1 {
            return e;
        }
        let (xs, p) = (m[1].clone(), ps[0]);
        let (spine, parts): (Spine, Vec<T>) = (spine.to_vec(), parts.to_vec());
        self.changed = true;
        let mut reds = vec![];
        for (k, (op, z)) in ops.into_iter().zip(zs).enumerate() {
            // the element's function for component k: its lets, then its component
            let mut body = parts[k].clone();
            for (v, val) in spine.iter().rev() {
                body = t(N::Let(LetKind::Let, *v, Box::new(val.clone()), Box::new(body)), span);
            }
            let g = t(N::Lambda(vec![p], Box::new(body)), span);
            let g = if k == 0 { g } else { self.refresh(g) };
            let op = self.refresh(op);
            let mapped = t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![g, xs.clone()]), span);
            reds.push(t(
                N::Prim(Prim::Reduce(ir::ReduceKind::Plain), vec![op, z, mapped]),
                span,
            ));
        }
        t(N::Prim(Prim::Zip, reds), span)
    }

    /// `e` with its children rewritten by `f`.
    pub(super) fn map_kids(&mut self, e: T, f: fn(&mut Self, T) -> T) -> T {
        let span = e.span;
        let n = match e.n {
            N::Lambda(ps, b) => N::Lambda(ps, Box::new(f(self, *b))),
            N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| f(self, a)).collect()),
            N::Op(o, a) => N::Op(o, a.into_iter().map(|a| f(self, a)).collect()),
            N::If(b) => {
                let [c, x, y] = *b;
                N::If(Box::new([f(self, c), f(self, x), f(self, y)]))
            }
            N::Let(k, v, val, body) => N::Let(k, v, Box::new(f(self, *val)), Box::new(f(self, *body))),
            N::Pack(a) => N::Pack(Box::new(f(self, *a))),
            n => n,
        };
        t(n, span)
    }

    /// `e` with fresh variables for each of its binders (a copy of a term keeps binders
    /// distinct across the program).
    fn refresh(&mut self, e: T) -> T {
        let span = e.span;
        let renew = |cx: &mut Self, v: VarId| {
            let base = cx.vars[v.index()]
                .name
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .to_string();
            cx.fresh(&base, span)
        };
        let n = match e.n {
            N::Lambda(ps, b) => {
                let mut b = *b;
                let mut fresh = vec![];
                for p in ps {
                    let q = renew(self, p);
                    b = subst(b, p, &t(N::Var(q), span));
                    fresh.push(q);
                }
                N::Lambda(fresh, Box::new(self.refresh(b)))
            }
            N::Let(k, v, val, body) => {
                let w = renew(self, v);
                let body = subst(*body, v, &t(N::Var(w), span));
                N::Let(k, w, Box::new(self.refresh(*val)), Box::new(self.refresh(body)))
            }
            other => return self.map_kids(t(other, span), Self::refresh),
        };
        t(n, span)
    }
}

fn tuple(parts: Vec<T>, span: Span) -> T {
    t(N::Op(Op::Tuple, parts), span)
}

/// `reduce f z (map g xs)` (or `reduce f z xs`, `g` the identity): `(f, z, g, xs)`.
fn reduction(e: &T) -> Option<(&T, &T, Option<&T>, &T)> {
    let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), a) = &e.n else {
        return None;
    };
    if !matches!(&a[0].n, N::Lambda(ps, _) if ps.len() == 2) {
        return None;
    }
    match &a[2].n {
        N::Prim(Prim::Map(ir::MapKind::Plain), m) if matches!(&m[0].n, N::Lambda(ps, _) if ps.len() == 1) => {
            Some((&a[0], &a[1], Some(&m[0]), &m[1]))
        }
        _ => Some((&a[0], &a[1], None, &a[2])),
    }
}

/// `tuple z0 z1`: its components.
fn pair_of(e: &T) -> Option<Vec<T>> {
    match &e.n {
        N::Op(Op::Tuple, a) if a.len() == 2 => Some(a.clone()),
        _ => None,
    }
}

/// `λ(u v). tuple B0 B1`, `Bk` reading `u` and `v` only as `get #k u`, `get #k v`: the
/// operators `λ(a b). Bk[a/get #k u, b/get #k v]` (the parameters' projections renamed).
fn pair_operator(f: &T) -> Option<Vec<T>> {
    let N::Lambda(ps, b) = &f.n else { return None };
    let parts = pair_of(b)?;
    if ps.len() != 2 {
        return None;
    }
    let (u, v) = (ps[0], ps[1]);
    let mut out = vec![];
    for (k, part) in parts.into_iter().enumerate() {
        // projections of k become the parameters themselves (u, v reused as the binders)
        let part = project(part, &[u, v], k as u8)?;
        out.push(t(N::Lambda(vec![u, v], Box::new(part)), f.span));
    }
    Some(out)
}

/// `e` with `get #k x` as `x` for each `x` of `xs`; `None` when `e` reads an `x` otherwise.
fn project(e: T, xs: &[VarId], k: u8) -> Option<T> {
    let span = e.span;
    let n = match e.n {
        N::Op(Op::Get(i), a) if matches!(&a[0].n, N::Var(x) if xs.contains(x)) => {
            return (i == k).then(|| a.into_iter().next().expect("get's operand"));
        }
        N::Var(x) if xs.contains(&x) => return None,
        N::Lambda(ps, b) => N::Lambda(ps, Box::new(project(*b, xs, k)?)),
        N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| project(a, xs, k)).collect::<Option<_>>()?),
        N::Op(o, a) => N::Op(o, a.into_iter().map(|a| project(a, xs, k)).collect::<Option<_>>()?),
        N::If(b) => {
            let [c, x, y] = *b;
            N::If(Box::new([project(c, xs, k)?, project(x, xs, k)?, project(y, xs, k)?]))
        }
        N::Let(l, v, val, body) => N::Let(l, v, Box::new(project(*val, xs, k)?), Box::new(project(*body, xs, k)?)),
        N::Pack(a) => N::Pack(Box::new(project(*a, xs, k)?)),
        n => n,
    };
    Some(t(n, span))
}

/// The `let`s a body starts with: each variable and its value.
type Spine = Vec<(VarId, T)>;

/// A body `let v1 V1 (… (tuple G0 G1))`: the lets (scalars; no lambda inside them) and the
/// components.
fn pair_body(e: &T) -> Option<(Spine, Vec<T>)> {
    let mut spine = vec![];
    let mut e = e;
    while let N::Let(LetKind::Let, v, val, b) = &e.n {
        if has_lambda(val) {
            return None;
        }
        spine.push((*v, (**val).clone()));
        e = b;
    }
    Some((spine, pair_of(e)?))
}

/// The largest arithmetic subterm of `a` (three nodes or more, no binder inside) that `b` has
/// too.
fn common(a: &T, b: &T) -> Option<T> {
    let mut found: Option<(usize, T)> = None;
    let mut stack = vec![a];
    while let Some(e) = stack.pop() {
        let n = size(e);
        let arith = matches!(&e.n, N::Op(o, _) if !matches!(o, Op::Get(_) | Op::Tuple));
        if arith && n >= 3 && !has_binder(e) && found.as_ref().is_none_or(|(m, _)| n > *m) && occurs(b, e) {
            found = Some((n, e.clone()));
            continue;
        }
        match &e.n {
            N::Prim(_, k) | N::Op(_, k) => stack.extend(k.iter()),
            N::If(k) => stack.extend(k.iter()),
            N::Let(_, _, v, body) => stack.extend([&**v, &**body]),
            N::Lambda(_, body) | N::Pack(body) => stack.push(body),
            N::Var(_) | N::Lit(_) => {}
        }
    }
    found.map(|(_, c)| c)
}

fn size(e: &T) -> usize {
    1 + match &e.n {
        N::Prim(_, k) | N::Op(_, k) => k.iter().map(size).sum(),
        N::If(k) => k.iter().map(size).sum(),
        N::Let(_, _, v, b) => size(v) + size(b),
        N::Lambda(_, b) | N::Pack(b) => size(b),
        N::Var(_) | N::Lit(_) => 0,
    }
}

fn has_binder(e: &T) -> bool {
    match &e.n {
        N::Lambda(..) | N::Let(..) => true,
        N::Var(_) | N::Lit(_) => false,
        N::Prim(_, a) | N::Op(_, a) => a.iter().any(has_binder),
        N::If(b) => b.iter().any(has_binder),
        N::Pack(a) => has_binder(a),
    }
}

/// Whether `c` is a subterm of `e`.
fn occurs(e: &T, c: &T) -> bool {
    super::same(e, c)
        || match &e.n {
            N::Prim(_, k) | N::Op(_, k) => k.iter().any(|k| occurs(k, c)),
            N::If(k) => k.iter().any(|k| occurs(k, c)),
            N::Let(_, _, v, b) => occurs(v, c) || occurs(b, c),
            N::Lambda(_, b) | N::Pack(b) => occurs(b, c),
            N::Var(_) | N::Lit(_) => false,
        }
}

/// `e` with each occurrence of `c` replaced by `by`.
fn replace(e: T, c: &T, by: &T) -> T {
    if super::same(&e, c) {
        return by.clone();
    }
    let span = e.span;
    let n = match e.n {
        N::Lambda(ps, b) => N::Lambda(ps, Box::new(replace(*b, c, by))),
        N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| replace(a, c, by)).collect()),
        N::Op(o, a) => N::Op(o, a.into_iter().map(|a| replace(a, c, by)).collect()),
        N::If(b) => {
            let [x, y, z] = *b;
            N::If(Box::new([replace(x, c, by), replace(y, c, by), replace(z, c, by)]))
        }
        N::Let(k, v, val, body) => N::Let(k, v, Box::new(replace(*val, c, by)), Box::new(replace(*body, c, by))),
        N::Pack(a) => N::Pack(Box::new(replace(*a, c, by))),
        n => n,
    };
    t(n, span)
}

fn has_lambda(e: &T) -> bool {
    match &e.n {
        N::Lambda(..) => true,
        N::Var(_) | N::Lit(_) => false,
        N::Prim(_, a) | N::Op(_, a) => a.iter().any(has_lambda),
        N::If(b) => b.iter().any(has_lambda),
        N::Let(_, _, v, b) => has_lambda(v) || has_lambda(b),
        N::Pack(a) => has_lambda(a),
    }
}
