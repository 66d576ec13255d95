//! Normalisation of a map over a zip of mapped arrays into one map over the arrays they map.
//!
//! **Zip of maps** (`t` the pair of the consumer, `X_k = map (λp. F_k) a_k`, or `join (map
//! (λp. R_k) a_k)` with `R_k` a one-element array, read as `F_k = at 0 R_k`):
//!
//! `map (λt. B[get #k t, …]) (zip … X_k …)` = `map (λu. B[F_k[get #k u/p], …]) (zip … a_k …)`,
//! and operands that are then the same array are one: `zip a a` is `a` (`get #k u` of it `u`).
//!
//! Side conditions: `B` reads `t` only through `get`s; a fused component `k` is read once, not
//! inside a lambda of `B` (so `F_k` is computed as often as before: once an element).
//!
//! Why: each mapped operand is otherwise an array of its own, made by a kernel and read back,
//! and a zip of two such arrays bound at host level was copied by a single work-item (nn with
//! its coordinates unzipped first ran 10,000× slower than over the points, md with its
//! neighbours' positions gathered first 9,700× slower: `bench/results/forms-nvidia-h200-2026-12-01.md`).
//! Fused, the consumer reads the operands' elements where it uses them, as the suite's files do.

use super::{one_element, same, t, Cx, N, T};
use ir::{Op, Prim, VarId};

impl Cx<'_> {
    /// The zip-of-maps equality of the module doc at the root `map` of `e`, if it applies.
    pub(super) fn zip_of_maps(&mut self, f: &T, xs: &T) -> Option<T> {
        let span = xs.span;
        let N::Lambda(ts, body) = &f.n else { return None };
        let N::Prim(Prim::Zip, ops) = &xs.n else { return None };
        if ts.len() != 1 || reads_whole(body, ts[0]) {
            return None;
        }
        let tv = ts[0];
        // the fused operands: (a_k, p, F_k)
        let mut fused: Vec<Option<(T, VarId, T)>> = vec![];
        for (k, x) in ops.iter().enumerate() {
            let once = {
                let (n, under) = uses_get(body, tv, k as u8, false);
                n == 1 && !under
            };
            fused.push(if once { mapped(x) } else { None });
        }
        if fused.iter().all(Option::is_none) {
            return None;
        }
        // the new operands, each distinct array once
        let mut new_ops: Vec<T> = vec![];
        let mut index = vec![];
        for (x, fk) in ops.iter().zip(&fused) {
            let a = fk.as_ref().map_or(x, |(a, ..)| a);
            let at = match new_ops.iter().position(|o| same(o, a)) {
                Some(i) => i,
                None => {
                    new_ops.push(a.clone());
                    new_ops.len() - 1
                }
            };
            index.push(at);
        }
        self.changed = true;
        let u = self.fresh("elem", span);
        let uv = t(N::Var(u), span);
        let proj = |i: usize| {
            if new_ops.len() == 1 {
                uv.clone()
            } else {
                t(N::Op(Op::Get(i as u8), vec![uv.clone()]), span)
            }
        };
        let by: Vec<T> = fused
            .iter()
            .zip(&index)
            .map(|(fk, &i)| match fk {
                Some((_, p, fb)) => super::subst(fb.clone(), *p, &proj(i)),
                None => proj(i),
            })
            .collect();
        let body = replace_gets(body, tv, &by);
        let over = if new_ops.len() == 1 {
            new_ops.remove(0)
        } else {
            t(N::Prim(Prim::Zip, new_ops), span)
        };
        let f = t(N::Lambda(vec![u], Box::new(body)), f.span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, over]), span))
    }
}

impl Cx<'_> {
    /// A reduction's zip of maps (**reduced zip of maps**): `reduce f z (zip … X_k …)` =
    /// `reduce f z (map (λu. tuple … F_k[get #k u/p] …) (zip … a_k …))`, the zip of maps above
    /// applied to the identity `map (λt. tuple (get #0 t) … (get #n t))` the reduction reads;
    /// the reduction's operator is untouched. Side condition: an operand is a map (or `join`
    /// of a map of one-element arrays). Why: otherwise the mapped operand is stored whole
    /// before the reduction reads it (k-means' distances to every cluster, written by each
    /// work-item to global memory and read back), where fused each is computed as it is
    /// reduced, as when the reduction's input is written as one map (`reduce∘map`).
    pub(super) fn reduced_zip_of_maps(&mut self, xs: &T) -> Option<T> {
        let span = xs.span;
        let N::Prim(Prim::Zip, ops) = &xs.n else { return None };
        if !ops.iter().any(|x| mapped(x).is_some()) || ops.len() > usize::from(u8::MAX) {
            return None;
        }
        let tv = self.fresh("pair", span);
        let get = |k: usize| t(N::Op(Op::Get(k as u8), vec![t(N::Var(tv), span)]), span);
        let tuple = t(N::Op(Op::Tuple, (0..ops.len()).map(get).collect()), span);
        let f = t(N::Lambda(vec![tv], Box::new(tuple)), span);
        self.zip_of_maps(&f, xs)
    }

    /// A zip as an operand of the zip a map reads is flattened into it: `map (λu. B) (zip …
    /// (zip a1 … an) …)` = `map (λv. B') (zip … a1 … an …)`, `B` reading `u` and that operand's
    /// pairs only through `get`s (`get #i (get #k u)` becomes one `get` of `v`). Zip of maps
    /// makes such zips (`zip (map f (zip kx ky kz)) phi`), and the rules read a flat zip only.
    pub(super) fn flat_zip(&mut self, f: &T, xs: &T) -> Option<T> {
        let span = xs.span;
        let N::Lambda(us, body) = &f.n else { return None };
        let N::Prim(Prim::Zip, ops) = &xs.n else { return None };
        if us.len() != 1 || reads_whole(body, us[0]) {
            return None;
        }
        let u = us[0];
        let k = ops.iter().position(|o| matches!(o.n, N::Prim(Prim::Zip, _)))?;
        if pair_read_whole(body, u, k as u8) {
            return None;
        }
        let N::Prim(_, inner) = &ops[k].n else {
            unreachable!("found above")
        };
        let mut new_ops: Vec<T> = ops[..k].to_vec();
        new_ops.extend(inner.iter().cloned());
        new_ops.extend(ops[k + 1..].iter().cloned());
        let width = inner.len();
        if new_ops.len() > usize::from(u8::MAX) {
            return None;
        }
        self.changed = true;
        let v = self.fresh("elem", span);
        let body = reflat(body, u, v, k, width);
        let f = t(N::Lambda(vec![v], Box::new(body)), f.span);
        let zip = t(N::Prim(Prim::Zip, new_ops), span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, zip]), span))
    }
}

impl Cx<'_> {
    /// `map (λu. B) (zip a_0 … a_n)` with `B` reading `u` only through `get`s and no `get #k
    /// u` for some `k`: the zip without those components (the array itself when one is left).
    /// Why: a reduction split from one of pairs (`normalise_tuple`) reads two of the three
    /// arrays of the zip they shared, and a zip's every array is read where it is staged.
    pub(super) fn unread_components(&mut self, f: &T, xs: &T) -> Option<T> {
        let span = xs.span;
        let N::Lambda(us, body) = &f.n else { return None };
        let N::Prim(Prim::Zip, ops) = &xs.n else { return None };
        if us.len() != 1 || reads_whole(body, us[0]) {
            return None;
        }
        let u = us[0];
        let read: Vec<bool> = (0..ops.len())
            .map(|k| uses_get(body, u, k as u8, false).0 > 0)
            .collect();
        if read.iter().all(|r| *r) || !read.iter().any(|r| *r) {
            return None;
        }
        self.changed = true;
        let kept: Vec<usize> = (0..ops.len()).filter(|k| read[*k]).collect();
        let v = self.fresh("elem", span);
        let by: Vec<T> = (0..ops.len())
            .map(|k| match kept.iter().position(|j| *j == k) {
                Some(_) if kept.len() == 1 => t(N::Var(v), span),
                Some(i) => t(N::Op(Op::Get(i as u8), vec![t(N::Var(v), span)]), span),
                // never read: any term (no `get` of it is left to replace)
                None => t(N::Var(v), span),
            })
            .collect();
        let body = replace_gets(body, u, &by);
        let over = if kept.len() == 1 {
            ops[kept[0]].clone()
        } else {
            t(N::Prim(Prim::Zip, kept.iter().map(|k| ops[*k].clone()).collect()), span)
        };
        let f = t(N::Lambda(vec![v], Box::new(body)), f.span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, over]), span))
    }
}

/// Whether `e` reads `get #k u` other than through a `get` of it.
fn pair_read_whole(e: &T, u: VarId, k: u8) -> bool {
    let is_pair = |a: &T| matches!(&a.n, N::Op(Op::Get(g), b) if *g == k && matches!(b[0].n, N::Var(x) if x == u));
    match &e.n {
        N::Op(Op::Get(_), a) if is_pair(&a[0]) => false,
        _ if is_pair(e) => true,
        N::Var(_) | N::Lit(_) => false,
        N::Lambda(_, b) | N::Pack(b) => pair_read_whole(b, u, k),
        N::Prim(_, a) | N::Op(_, a) => a.iter().any(|a| pair_read_whole(a, u, k)),
        N::If(b) => b.iter().any(|a| pair_read_whole(a, u, k)),
        N::Let(_, _, x, b) => pair_read_whole(x, u, k) || pair_read_whole(b, u, k),
    }
}

/// `e` reading the flat zip's `v`: `get #i (get #k u)` is `get #(k+i) v`, `get #j u` is `get
/// #j v` before `k` and `get #(j+width-1) v` after.
fn reflat(e: &T, u: VarId, v: VarId, k: usize, width: usize) -> T {
    let span = e.span;
    let get = |i: usize| t(N::Op(Op::Get(i as u8), vec![t(N::Var(v), span)]), span);
    if let N::Op(Op::Get(i), a) = &e.n {
        if let N::Op(Op::Get(j), b) = &a[0].n {
            if usize::from(*j) == k && matches!(b[0].n, N::Var(x) if x == u) {
                return get(k + usize::from(*i));
            }
        }
        if matches!(a[0].n, N::Var(x) if x == u) {
            let j = usize::from(*i);
            return get(if j < k { j } else { j + width - 1 });
        }
    }
    let n = match &e.n {
        N::Lambda(ps, b) => N::Lambda(ps.clone(), Box::new(reflat(b, u, v, k, width))),
        N::Prim(p, a) => N::Prim(p.clone(), a.iter().map(|a| reflat(a, u, v, k, width)).collect()),
        N::Op(o, a) => N::Op(*o, a.iter().map(|a| reflat(a, u, v, k, width)).collect()),
        N::If(b) => N::If(Box::new([
            reflat(&b[0], u, v, k, width),
            reflat(&b[1], u, v, k, width),
            reflat(&b[2], u, v, k, width),
        ])),
        N::Let(l, x, val, b) => N::Let(
            *l,
            *x,
            Box::new(reflat(val, u, v, k, width)),
            Box::new(reflat(b, u, v, k, width)),
        ),
        N::Pack(a) => N::Pack(Box::new(reflat(a, u, v, k, width))),
        n => n.clone(),
    };
    t(n, span)
}

/// `(a, p, F)` for `map (λp. F) a`, or `(a, p, at 0 R)` for `join (map (λp. R) a)`, `R` one
/// element.
fn mapped(x: &T) -> Option<(T, VarId, T)> {
    let (m, at0) = match &x.n {
        N::Prim(Prim::Map(ir::MapKind::Plain), m) => (m, false),
        N::Prim(Prim::Join, j) => match &j[0].n {
            N::Prim(Prim::Map(ir::MapKind::Plain), m) => (m, true),
            _ => return None,
        },
        _ => return None,
    };
    let N::Lambda(ps, b) = &m[0].n else { return None };
    if ps.len() != 1 || !super::high_level(b) {
        return None;
    }
    if at0 {
        if !one_element(b) {
            return None;
        }
        let span = b.span;
        let zero = t(N::Lit(ir::Lit::Int(0)), span);
        let at = t(N::Op(Op::At, vec![zero, (**b).clone()]), span);
        return Some((m[1].clone(), ps[0], at));
    }
    Some((m[1].clone(), ps[0], (**b).clone()))
}

/// How often `get #k t` occurs in `e`, and whether inside a lambda (`under`: `e` itself is).
fn uses_get(e: &T, tv: VarId, k: u8, under: bool) -> (usize, bool) {
    if let N::Op(Op::Get(g), a) = &e.n {
        if matches!(a[0].n, N::Var(v) if v == tv) {
            return if *g == k { (1, under) } else { (0, false) };
        }
    }
    let sum = |a: &[T], under: bool| {
        a.iter()
            .map(|a| uses_get(a, tv, k, under))
            .fold((0, false), |(n, u), (m, v)| (n + m, u || v))
    };
    match &e.n {
        N::Var(_) | N::Lit(_) => (0, false),
        N::Lambda(_, b) => uses_get(b, tv, k, true),
        N::Pack(b) => uses_get(b, tv, k, under),
        N::Prim(_, a) | N::Op(_, a) => sum(a, under),
        N::If(b) => sum(&b[..], under),
        N::Let(_, _, v, b) => {
            let (n, u) = uses_get(v, tv, k, under);
            let (m, w) = uses_get(b, tv, k, under);
            (n + m, u || w)
        }
    }
}

/// Whether `e` reads `t` other than through a `get` of it.
fn reads_whole(e: &T, tv: VarId) -> bool {
    match &e.n {
        N::Var(v) => *v == tv,
        N::Op(Op::Get(_), a) if matches!(a[0].n, N::Var(_)) => false,
        N::Lit(_) => false,
        N::Lambda(_, b) | N::Pack(b) => reads_whole(b, tv),
        N::Prim(_, a) | N::Op(_, a) => a.iter().any(|a| reads_whole(a, tv)),
        N::If(b) => b.iter().any(|a| reads_whole(a, tv)),
        N::Let(_, _, v, b) => reads_whole(v, tv) || reads_whole(b, tv),
    }
}

/// `e` with every `get #k t` replaced by `by[k]`.
fn replace_gets(e: &T, tv: VarId, by: &[T]) -> T {
    let span = e.span;
    if let N::Op(Op::Get(k), a) = &e.n {
        if matches!(a[0].n, N::Var(v) if v == tv) {
            return by[usize::from(*k)].clone();
        }
    }
    let n = match &e.n {
        N::Lambda(ps, b) => N::Lambda(ps.clone(), Box::new(replace_gets(b, tv, by))),
        N::Prim(p, a) => N::Prim(p.clone(), a.iter().map(|a| replace_gets(a, tv, by)).collect()),
        N::Op(o, a) => N::Op(*o, a.iter().map(|a| replace_gets(a, tv, by)).collect()),
        N::If(b) => N::If(Box::new([
            replace_gets(&b[0], tv, by),
            replace_gets(&b[1], tv, by),
            replace_gets(&b[2], tv, by),
        ])),
        N::Let(k, v, val, b) => N::Let(
            *k,
            *v,
            Box::new(replace_gets(val, tv, by)),
            Box::new(replace_gets(b, tv, by)),
        ),
        N::Pack(a) => N::Pack(Box::new(replace_gets(a, tv, by))),
        n => n.clone(),
    };
    t(n, span)
}

/// Whether `e` is `map (λp. P) X`, `P` a chain of `get`s and `vget`s of `p` and `X` a view: an
/// array of components of another, read again where it is used at no cost (n-body's masses,
/// the `w` lanes of the positions, taken apart and zipped back with them).
pub(super) fn projections(e: &T) -> bool {
    fn proj(e: &T, p: VarId) -> bool {
        match &e.n {
            N::Var(v) => *v == p,
            N::Op(Op::Get(_) | Op::VGet(_), a) => proj(&a[0], p),
            _ => false,
        }
    }
    let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &e.n else {
        return false;
    };
    let N::Lambda(ps, b) = &m[0].n else { return false };
    ps.len() == 1 && !matches!(b.n, N::Var(_)) && proj(b, ps[0]) && super::is_view(&m[1])
}
