//! Normalisation of a map over an index array into a map over the arrays it indexes.
//!
//! **Index array** (`a₁ … a_k` the arrays read at the index, `k ≤ 2`):
//!
//! `map (λi. B[at i a₁, …]) (generate n (λj. j))` = `map (λt. B[t]) a₁` (one array) or
//! `map (λt. B[get #0 t, get #1 t]) (zip a₁ a₂)` (two).
//!
//! Side conditions: every use of `i` in `B` is such an `at i aₘ`; each `aₘ` reads neither `i`
//! nor a variable bound inside `B` (it is one array for every `i`), and its type is an array
//! of length `n` (so the map visits exactly its elements, in order).
//!
//! Why: the language has no other spelling of a map's own index, and an `at i a` is a random
//! read to the rules: no rule fuses it, vectorises it or splits it into work-group chunks, so
//! the index forms ran at a fraction of the speed of their zip forms. The pass runs before the
//! other equalities, which then see the zip form (a dot product of `at 0` inside it included).

use super::{free_vars, same, t, Cx, N, T};
use ir::{Op, Prim, Type, VarId};
use std::collections::BTreeSet;

impl Cx<'_> {
    /// `e` with every map over an index array in it (bottom-up) a map over the indexed arrays.
    pub(super) fn index_maps(&mut self, e: T) -> T {
        let span = e.span;
        let n = match e.n {
            N::Lambda(ps, b) => N::Lambda(ps, Box::new(self.index_maps(*b))),
            N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| self.index_maps(a)).collect()),
            N::Op(o, a) => N::Op(o, a.into_iter().map(|a| self.index_maps(a)).collect()),
            N::If(b) => {
                let [c, x, y] = *b;
                N::If(Box::new([self.index_maps(c), self.index_maps(x), self.index_maps(y)]))
            }
            N::Let(k, v, val, b) => N::Let(k, v, Box::new(self.index_maps(*val)), Box::new(self.index_maps(*b))),
            N::Pack(a) => N::Pack(Box::new(self.index_maps(*a))),
            n => n,
        };
        let e = t(n, span);
        self.over_indexed(&e).unwrap_or(e)
    }

    /// `map (λi. B) (generate n (λj. j))` as in the module doc, in zip form.
    fn over_indexed(&mut self, e: &T) -> Option<T> {
        let span = e.span;
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &e.n else {
            return None;
        };
        let N::Prim(Prim::Generate(n), g) = &m[1].n else {
            return None;
        };
        let N::Lambda(js, jb) = &g[0].n else { return None };
        if js.len() != 1 || !matches!(jb.n, N::Var(v) if v == js[0]) {
            return None;
        }
        let N::Lambda(is, body) = &m[0].n else { return None };
        if is.len() != 1 {
            return None;
        }
        let i = is[0];
        let mut arrays = vec![];
        if !only_at(body, i, &mut vec![], &mut arrays) || arrays.is_empty() || arrays.len() > 2 {
            return None;
        }
        // each array of length n
        let of_len_n = |a: &T| matches!(self.type_of(a), Some(Type::Array(_, len)) if len == *n);
        if !arrays.iter().all(of_len_n) {
            return None;
        }
        self.changed = true;
        let tv = self.fresh("elem", span);
        let var = t(N::Var(tv), span);
        let by: Vec<T> = if arrays.len() == 1 {
            vec![var]
        } else {
            (0..2u8)
                .map(|k| t(N::Op(Op::Get(k), vec![var.clone()]), span))
                .collect()
        };
        let body = replace(body, i, &arrays, &by);
        let over = if arrays.len() == 1 {
            arrays.remove(0)
        } else {
            t(N::Prim(Prim::Zip, arrays), span)
        };
        let f = t(N::Lambda(vec![tv], Box::new(body)), span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, over]), span))
    }

    /// The type of a variable, or of `at`/`get` of one, as typeck inferred it.
    fn type_of(&self, e: &T) -> Option<Type> {
        match &e.n {
            N::Var(v) => self.info.var_types.get(v.index()).cloned().flatten(),
            N::Op(Op::At, a) => match self.type_of(&a[1])? {
                Type::Array(el, _) => Some(*el),
                _ => None,
            },
            N::Op(Op::Get(k), a) => match self.type_of(&a[0])? {
                Type::Tuple(ts) => ts.get(usize::from(*k)).cloned(),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether every use of `i` in `e` is `at i a` with `a` reading neither `i` nor a variable of
/// `bound` (bound inside the map's body); the distinct `a`s are collected.
fn only_at(e: &T, i: VarId, bound: &mut Vec<VarId>, arrays: &mut Vec<T>) -> bool {
    if let N::Op(Op::At, a) = &e.n {
        if matches!(a[0].n, N::Var(v) if v == i) {
            let mut fv = BTreeSet::new();
            free_vars(&a[1], &mut vec![], &mut fv);
            if fv.contains(&i) || bound.iter().any(|b| fv.contains(b)) {
                return false;
            }
            if !arrays.iter().any(|x| same(x, &a[1])) {
                arrays.push(a[1].clone());
            }
            return true;
        }
    }
    match &e.n {
        N::Var(v) => *v != i,
        N::Lit(_) => true,
        N::Lambda(ps, b) => {
            let n = bound.len();
            bound.extend(ps);
            let ok = only_at(b, i, bound, arrays);
            bound.truncate(n);
            ok
        }
        N::Prim(_, a) | N::Op(_, a) => a.iter().all(|a| only_at(a, i, bound, arrays)),
        N::If(b) => b.iter().all(|a| only_at(a, i, bound, arrays)),
        N::Let(_, v, val, b) => {
            let ok = only_at(val, i, bound, arrays);
            bound.push(*v);
            let ok = ok && only_at(b, i, bound, arrays);
            bound.pop();
            ok
        }
        N::Pack(a) => only_at(a, i, bound, arrays),
    }
}

/// `e` with `at i arrays[m]` replaced by `by[m]`.
fn replace(e: &T, i: VarId, arrays: &[T], by: &[T]) -> T {
    let span = e.span;
    if let N::Op(Op::At, a) = &e.n {
        if matches!(a[0].n, N::Var(v) if v == i) {
            if let Some(m) = arrays.iter().position(|x| same(x, &a[1])) {
                return by[m].clone();
            }
        }
    }
    let n = match &e.n {
        N::Lambda(ps, b) => N::Lambda(ps.clone(), Box::new(replace(b, i, arrays, by))),
        N::Prim(p, a) => N::Prim(p.clone(), a.iter().map(|a| replace(a, i, arrays, by)).collect()),
        N::Op(o, a) => N::Op(*o, a.iter().map(|a| replace(a, i, arrays, by)).collect()),
        N::If(b) => N::If(Box::new([
            replace(&b[0], i, arrays, by),
            replace(&b[1], i, arrays, by),
            replace(&b[2], i, arrays, by),
        ])),
        N::Let(k, v, val, b) => N::Let(
            *k,
            *v,
            Box::new(replace(val, i, arrays, by)),
            Box::new(replace(b, i, arrays, by)),
        ),
        N::Pack(a) => N::Pack(Box::new(replace(a, i, arrays, by))),
        n => n.clone(),
    };
    t(n, span)
}
