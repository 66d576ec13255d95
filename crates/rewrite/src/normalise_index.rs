//! Normalisation of a map over an index array into a map over the arrays it indexes.
//!
//! **Index array** (`a₁ … a_k` the arrays read at the index, `k ≤ 8`):
//!
//! `map (λi. B[at i a₁, …]) (generate n (λj. j))` = `map (λt. B[t]) a₁` (one array) or
//! `map (λt. B[get #0 t, get #1 t, …]) (zip a₁ a₂ …)` (two or three).
//!
//! Side conditions: every use of `i` in `B` is such an `at i aₘ`; each `aₘ` reads neither `i`
//! nor a variable bound inside `B` (it is one array for every `i`), and its type is an array
//! of length `n` (so the map visits exactly its elements, in order).
//!
//! Why: the language has no other spelling of a map's own index, and an `at i a` is a random
//! read to the rules: no rule fuses it, vectorises it or splits it into work-group chunks, so
//! the index forms ran at a fraction of the speed of their zip forms. The pass runs before the
//! other equalities, which then see the zip form (a dot product of `at 0` inside it included).
//!
//! **Column gather** (`j` a variable bound outside the map, `X` a matrix):
//!
//! `map (λr. B[at j r]) X` = `map (λc. B[c]) (at j (transpose X))`, and for a zip,
//! `map (λr. B[at j (get #k r)]) (zip … X_k …)` = `map (λr. B[get #k r]) (zip … (at j
//! (transpose X_k)) …)`.
//!
//! Side conditions: every read of `r` (of its component `k`) is such an `at j`. Why: the
//! element `j` of every row is column `j`, which the rules read as a column (a tiled transpose,
//! a column-block reduction) while `at j` of each row is a gather; with the index array above
//! (run bottom-up, so the inner map is a column map before the outer map over `j` is looked
//! at), `map (λj. map (λr. at j r) m) (generate n (λj. j))` is the copy `map (λc. map (λx. x)
//! c) (transpose m)`, and a product written with three index arrays is `mm` over `transpose B`.

use super::{free_vars, same, t, Cx, N, T};
use ir::{Op, Prim, Type, VarId};
use std::collections::BTreeSet;

/// The most arrays an index array is replaced by (the components of one zip): mri-q reads four
/// at its index.
const MAX_ARRAYS: usize = 8;

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
        // map (λi. B[at (+ i k) a]) (generate n id) = map (λw. B[at k w]) (slide m 1 a)
        if let Some(w) = self.window_index(&e) {
            return self.index_maps(w);
        }
        let e = self.over_indexed(&e).unwrap_or(e);
        self.column_gather(&e).unwrap_or(e)
    }

    /// `map (λr. B[at j r]) X` = `map (λc. B[c]) (at j (transpose X))`, and over a zip,
    /// `map (λr. B[at j (get #k r)]) (zip … X_k …)` = `map (λr. B[get #k r]) (zip … (at j
    /// (transpose X_k)) …)` for every component `k` read only at `j`, as in the module doc.
    fn column_gather(&mut self, e: &T) -> Option<T> {
        let span = e.span;
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &e.n else {
            return None;
        };
        let N::Lambda(rs, body) = &m[0].n else { return None };
        if rs.len() != 1 {
            return None;
        }
        let r = rs[0];
        let j = gather_index(body, r, &mut vec![r])?;
        let jv = t(N::Var(j), span);
        let gathered = |x: T| {
            let tr = t(N::Prim(Prim::Transpose, vec![x]), span);
            t(N::Op(Op::At, vec![jv.clone(), tr]), span)
        };
        let rv = t(N::Var(r), span);
        if let N::Prim(Prim::Zip, xs) = &m[1].n {
            let mut body = (**body).clone();
            let mut xs = xs.clone();
            let mut any = false;
            for (k, x) in xs.iter_mut().enumerate() {
                let get = t(N::Op(Op::Get(k as u8), vec![rv.clone()]), span);
                let hole = self.fresh("col", span);
                let b = replace(&body, j, std::slice::from_ref(&get), &[t(N::Var(hole), span)]);
                if same(&b, &body) || !self.matrix(x) || reads_component(&b, r, k as u8) {
                    continue;
                }
                body = super::subst(b, hole, &get);
                *x = gathered(x.clone());
                any = true;
            }
            if !any || reads_whole(&body, r) {
                return None;
            }
            self.changed = true;
            let f = t(N::Lambda(vec![r], Box::new(body)), span);
            let zip = t(N::Prim(Prim::Zip, xs), span);
            return Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, zip]), span));
        }
        if !self.matrix(&m[1]) {
            return None;
        }
        let c = self.fresh("elem", span);
        let b = replace(body, j, std::slice::from_ref(&rv), &[t(N::Var(c), span)]);
        let mut fv = BTreeSet::new();
        free_vars(&b, &mut vec![], &mut fv);
        if fv.contains(&r) {
            return None;
        }
        self.changed = true;
        let f = t(N::Lambda(vec![c], Box::new(b)), span);
        Some(t(
            N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, gathered(m[1].clone())]),
            span,
        ))
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
        if !only_at(body, i, &mut vec![], &mut arrays) || arrays.is_empty() || arrays.len() > MAX_ARRAYS {
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
            (0..arrays.len() as u8)
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

    /// Whether `x` is an array of arrays (of known lengths), by its type.
    fn matrix(&self, x: &T) -> bool {
        matches!(self.type_of(x), Some(Type::Array(row, _)) if matches!(*row, Type::Array(..)))
    }

    /// The type of a variable, or of `at`/`get` of one, as typeck inferred it.
    pub(super) fn type_of(&self, e: &T) -> Option<Type> {
        match &e.n {
            N::Var(v) => (self.info.var_types.get(v.index()).cloned().flatten())
                .or_else(|| self.types.iter().find(|(x, _)| x == v).map(|(_, ty)| ty.clone())),
            N::Op(Op::At, a) => match self.type_of(&a[1])? {
                Type::Array(el, _) => Some(*el),
                _ => None,
            },
            N::Op(Op::Get(k), a) => match self.type_of(&a[0])? {
                Type::Tuple(ts) => ts.get(usize::from(*k)).cloned(),
                _ => None,
            },
            N::Prim(Prim::PadClamp(l, r), a) => match self.type_of(&a[0])? {
                Type::Array(el, n) => Some(Type::Array(el, n.add(l).add(r))),
                _ => None,
            },
            N::Prim(Prim::Transpose, a) => match self.type_of(&a[0])? {
                Type::Array(row, n) => match *row {
                    Type::Array(el, m) => Some(Type::Array(Box::new(Type::Array(el, n)), m)),
                    _ => None,
                },
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

/// The index `j` of the first `at j r` or `at j (get #k r)` in `e` where `j` is a variable
/// bound outside the map (not in `bound`: `r` and the binders inside its body).
fn gather_index(e: &T, r: VarId, bound: &mut Vec<VarId>) -> Option<VarId> {
    if let N::Op(Op::At, a) = &e.n {
        let of_r = match &a[1].n {
            N::Var(v) => *v == r,
            N::Op(Op::Get(_), g) => matches!(g[0].n, N::Var(v) if v == r),
            _ => false,
        };
        if let (N::Var(j), true) = (&a[0].n, of_r) {
            if !bound.contains(j) {
                return Some(*j);
            }
        }
    }
    match &e.n {
        N::Var(_) | N::Lit(_) => None,
        N::Lambda(ps, b) => {
            let n = bound.len();
            bound.extend(ps);
            let found = gather_index(b, r, bound);
            bound.truncate(n);
            found
        }
        N::Prim(_, a) | N::Op(_, a) => a.iter().find_map(|a| gather_index(a, r, bound)),
        N::If(b) => b.iter().find_map(|a| gather_index(a, r, bound)),
        N::Let(_, v, val, b) => gather_index(val, r, bound).or_else(|| {
            bound.push(*v);
            let found = gather_index(b, r, bound);
            bound.pop();
            found
        }),
        N::Pack(a) => gather_index(a, r, bound),
    }
}

/// Whether `e` reads `get #k r`.
fn reads_component(e: &T, r: VarId, k: u8) -> bool {
    if let N::Op(Op::Get(g), a) = &e.n {
        if *g == k && matches!(a[0].n, N::Var(v) if v == r) {
            return true;
        }
    }
    children(e).iter().any(|c| reads_component(c, r, k))
}

/// Whether `e` reads `r` other than through a `get` of it.
fn reads_whole(e: &T, r: VarId) -> bool {
    match &e.n {
        N::Var(v) => *v == r,
        N::Op(Op::Get(_), a) if matches!(a[0].n, N::Var(_)) => false,
        _ => children(e).iter().any(|c| reads_whole(c, r)),
    }
}

fn children(e: &T) -> Vec<&T> {
    match &e.n {
        N::Var(_) | N::Lit(_) => vec![],
        N::Lambda(_, b) | N::Pack(b) => vec![b],
        N::Prim(_, a) | N::Op(_, a) => a.iter().collect(),
        N::If(b) => b.iter().collect(),
        N::Let(_, _, v, b) => vec![v, b],
    }
}
