//! Normalisation of a reduction over arrays with an element-wise operator into one reduction a
//! column.
//!
//! **Element-wise accumulation** (`⊕` a scalar operator, `vadd u v = map (λp. ⊕ (get #0 p)
//! (get #1 p)) (zip u v)`, `Z = map (λ_. z) Y` with `z` the neutral of `⊕`, the rows scaled from
//! a matrix `m` stored row-major and a vector `v`, `rows = map (λr. map (λa. E[a, get #j r])
//! (get #i r)) (zip …)` with `m` the `i`th and `v` the `j`th component):
//!
//! `at 0 (reduce vadd Z rows)` = `join (map (λc. reduce ⊕ z (map (λp. E[get #0 p, get #1 p])
//! (zip c v))) (transpose m))`, and `join (map (λx. reduce vadd Z rows(x)) X)` = `map (λx.
//! join (map (λc. …) (transpose m))) X`: element `k` of the sum of the rows is the reduction of
//! column `k`.
//!
//! Side conditions: `vadd` element-wise (the operator of its pairs `+`, `*`, `min` or `max`),
//! `z` its neutral element (as the two-level reduction's rule asks; any `z` for `min` and
//! `max`), and `E` reads the row's pair `r` only as `get #j r` (a scalar of the row). For
//! floats the sum is reassociated (by column rather than by row), within the interpreter's
//! float error bounds as the two-level rule is.
//!
//! **Rows scaled by a scalar computed from each** (atax as PolyBench's loop writes it: `t =
//! row · x`, then the rows `t · row` summed): `reduce vadd Z (join (map (λr. map (λs. map (λa.
//! E[a, s]) r) R) X))` = `let v (join (map (λr. R) X)) (reduce vadd Z (map (λp. map (λa. E[a,
//! get #1 p]) (get #0 p)) (zip X v)))`, which is then put in column form as above: the
//! scalars are computed once, a kernel of their own, as a vector the columns read.
//!
//! Why: as written, the reduction's operator is a function of arrays, which no reduction rule
//! matches, and the program ran in one work-item; the column form is what the column-block
//! rules (`col-reduce-*`) and the matrix rules read.

use super::{free_vars, neutral, t, Cx, N, T};
use ir::{Op, Prim, VarId};
use std::collections::BTreeSet;

impl Cx<'_> {
    /// `e` with every element-wise accumulation in it (bottom-up) put in column form.
    pub(super) fn elementwise_reductions(&mut self, e: T) -> T {
        let span = e.span;
        let n = match e.n {
            N::Lambda(ps, b) => N::Lambda(ps, Box::new(self.elementwise_reductions(*b))),
            N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| self.elementwise_reductions(a)).collect()),
            N::Op(o, a) => N::Op(o, a.into_iter().map(|a| self.elementwise_reductions(a)).collect()),
            N::If(b) => {
                let [c, x, y] = *b;
                N::If(Box::new([
                    self.elementwise_reductions(c),
                    self.elementwise_reductions(x),
                    self.elementwise_reductions(y),
                ]))
            }
            N::Let(k, v, val, b) => N::Let(
                k,
                v,
                Box::new(self.elementwise_reductions(*val)),
                Box::new(self.elementwise_reductions(*b)),
            ),
            N::Pack(a) => N::Pack(Box::new(self.elementwise_reductions(*a))),
            n => n,
        };
        let e = t(n, span);
        // at 0 (reduce vadd Z rows)
        if let N::Op(Op::At, a) = &e.n {
            if matches!(a[0].n, N::Lit(ir::Lit::Int(0))) {
                if let Some(cols) = self.columns(&a[1]) {
                    self.changed = true;
                    return cols;
                }
                if let Some((v, value, red)) = self.row_scalars(&a[1]) {
                    if let Some(cols) = self.columns(&red) {
                        self.changed = true;
                        return t(N::Let(ir::LetKind::Let, v, Box::new(value), Box::new(cols)), span);
                    }
                }
            }
        }
        // join (map (λx. reduce vadd Z rows(x)) X)
        if let N::Prim(Prim::Join, j) = &e.n {
            if let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &j[0].n {
                if let N::Lambda(xs, body) = &m[0].n {
                    if let Some(cols) = self.columns(body) {
                        self.changed = true;
                        let f = t(N::Lambda(xs.clone(), Box::new(cols)), span);
                        return t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, m[1].clone()]), span);
                    }
                }
            }
        }
        e
    }

    /// For `reduce vadd Z (join (map (λr. map (λs. let t s (map (λa. E[a, t]) r)) R) X))`
    /// (each row scaled by a scalar `R` computes from it, `at 0` lifted by `norm`): the
    /// scalars as a vector `v = join (map (λr. R) X)` and the reduction over `map (λp. map
    /// (λa. E[a, get #1 p]) (get #0 p)) (zip X v)`, the form `columns` reads.
    fn row_scalars(&mut self, e: &T) -> Option<(VarId, T, T)> {
        let span = e.span;
        let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), a) = &e.n else {
            return None;
        };
        elementwise(&a[0])?;
        let N::Prim(Prim::Join, j) = &a[2].n else { return None };
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &j[0].n else {
            return None;
        };
        let N::Lambda(rs, inner) = &m[0].n else { return None };
        let N::Prim(Prim::Map(ir::MapKind::Plain), im) = &inner.n else {
            return None;
        };
        let N::Lambda(ss, b) = &im[0].n else { return None };
        if rs.len() != 1 || ss.len() != 1 || !super::one_element(&im[1]) {
            return None;
        }
        let (r, s) = (rs[0], ss[0]);
        let (scalar, scaled) = match &b.n {
            N::Let(ir::LetKind::Let, tv, val, body) if matches!(val.n, N::Var(x) if x == s) => (*tv, &**body),
            _ => (s, &**b),
        };
        let N::Prim(Prim::Map(ir::MapKind::Plain), em) = &scaled.n else {
            return None;
        };
        let N::Lambda(els, elem) = &em[0].n else { return None };
        let mut fv = BTreeSet::new();
        free_vars(elem, &mut vec![], &mut fv);
        if els.len() != 1
            || !matches!(em[1].n, N::Var(x) if x == r)
            || fv.contains(&r)
            || fv.contains(&s) && scalar != s
        {
            return None;
        }
        let v = self.fresh("scalars", span);
        let p = self.fresh("row", span);
        let var = |x: VarId| t(N::Var(x), span);
        let get = |k: u8| t(N::Op(Op::Get(k), vec![var(p)]), span);
        let elem = super::subst((**elem).clone(), scalar, &get(1));
        let rows = t(
            N::Prim(
                Prim::Map(ir::MapKind::Plain),
                vec![
                    t(
                        N::Lambda(
                            vec![p],
                            Box::new(t(
                                N::Prim(
                                    Prim::Map(ir::MapKind::Plain),
                                    vec![t(N::Lambda(els.clone(), Box::new(elem)), span), get(0)],
                                ),
                                span,
                            )),
                        ),
                        span,
                    ),
                    t(N::Prim(Prim::Zip, vec![m[1].clone(), var(v)]), span),
                ],
            ),
            span,
        );
        let scalars = t(N::Lambda(vec![r], Box::new(im[1].clone())), span);
        let value = t(
            N::Prim(
                Prim::Join,
                vec![t(
                    N::Prim(Prim::Map(ir::MapKind::Plain), vec![scalars, m[1].clone()]),
                    span,
                )],
            ),
            span,
        );
        let red = t(
            N::Prim(
                Prim::Reduce(ir::ReduceKind::Plain),
                vec![a[0].clone(), a[1].clone(), rows],
            ),
            span,
        );
        Some((v, value, red))
    }

    /// For `reduce vadd Z rows` as in the module doc: `join (map (λc. reduce ⊕ z X(c))
    /// (transpose m))`.
    fn columns(&mut self, e: &T) -> Option<T> {
        let span = e.span;
        let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), a) = &e.n else {
            return None;
        };
        let op = elementwise(&a[0])?;
        let N::Prim(Prim::Map(ir::MapKind::Plain), zm) = &a[1].n else {
            return None;
        };
        let N::Lambda(_, z) = &zm[0].n else { return None };
        if !matches!(z.n, N::Lit(_)) || !neutral(op, z) {
            return None;
        }
        // rows = map (λr. map (λa. E) (get #i r)) (zip c0 c1)
        let N::Prim(Prim::Map(ir::MapKind::Plain), rm) = &a[2].n else {
            return None;
        };
        let N::Lambda(rs, row) = &rm[0].n else { return None };
        let N::Prim(Prim::Zip, comps) = &rm[1].n else {
            return None;
        };
        let N::Prim(Prim::Map(ir::MapKind::Plain), em) = &row.n else {
            return None;
        };
        let N::Lambda(els, elem) = &em[0].n else { return None };
        if rs.len() != 1 || els.len() != 1 || comps.len() != 2 {
            return None;
        }
        let (r, el) = (rs[0], els[0]);
        let i = match &em[1].n {
            N::Op(Op::Get(i), g) if matches!(g[0].n, N::Var(v) if v == r) && *i < 2 => *i,
            _ => return None,
        };
        let j = 1 - i;
        let p = self.fresh("pair", span);
        let c = self.fresh("col", span);
        let get = |k: u8| t(N::Op(Op::Get(k), vec![t(N::Var(p), span)]), span);
        let elem2 = project(elem, r, j, &get(1));
        let elem2 = super::subst(elem2, el, &get(0));
        let mut fv = BTreeSet::new();
        free_vars(&elem2, &mut vec![], &mut fv);
        if fv.contains(&r) {
            return None;
        }
        let x = self.fresh("acc", span);
        let y = self.fresh("acc", span);
        let var = |v: VarId| t(N::Var(v), span);
        let opf = t(
            N::Lambda(vec![x, y], Box::new(t(N::Op(op, vec![var(x), var(y)]), span))),
            span,
        );
        let zipped = t(N::Prim(Prim::Zip, vec![var(c), comps[usize::from(j)].clone()]), span);
        let scaled = t(
            N::Prim(
                Prim::Map(ir::MapKind::Plain),
                vec![t(N::Lambda(vec![p], Box::new(elem2)), span), zipped],
            ),
            span,
        );
        let red = t(
            N::Prim(Prim::Reduce(ir::ReduceKind::Plain), vec![opf, (**z).clone(), scaled]),
            span,
        );
        let matrix = t(N::Prim(Prim::Transpose, vec![comps[usize::from(i)].clone()]), span);
        let f = t(N::Lambda(vec![c], Box::new(red)), span);
        let cols = t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, matrix]), span);
        Some(t(N::Prim(Prim::Join, vec![cols]), span))
    }
}

/// The scalar operator `⊕` of an element-wise `λ(u v). map (λp. ⊕ (get #0 p) (get #1 p)) (zip
/// u v)` (either operand order in both places: `⊕` is commutative).
fn elementwise(f: &T) -> Option<Op> {
    let N::Lambda(uv, body) = &f.n else { return None };
    let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &body.n else {
        return None;
    };
    let N::Prim(Prim::Zip, z) = &m[1].n else { return None };
    let vars: BTreeSet<VarId> = z
        .iter()
        .filter_map(|a| match a.n {
            N::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    if uv.len() != 2 || z.len() != 2 || vars != uv.iter().copied().collect() {
        return None;
    }
    let N::Lambda(ps, b) = &m[0].n else { return None };
    let N::Op(op @ (Op::Add | Op::Mul | Op::Min | Op::Max), args) = &b.n else {
        return None;
    };
    let gets: BTreeSet<u8> = args
        .iter()
        .filter_map(|a| match &a.n {
            N::Op(Op::Get(k), g) if ps.len() == 1 && matches!(g[0].n, N::Var(v) if v == ps[0]) => Some(*k),
            _ => None,
        })
        .collect();
    (args.len() == 2 && gets == BTreeSet::from([0, 1])).then_some(*op)
}

/// `e` with every `get #j r` replaced by `by`.
fn project(e: &T, r: VarId, j: u8, by: &T) -> T {
    let span = e.span;
    if let N::Op(Op::Get(k), g) = &e.n {
        if *k == j && matches!(g[0].n, N::Var(v) if v == r) {
            return by.clone();
        }
    }
    let n = match &e.n {
        N::Lambda(ps, b) => N::Lambda(ps.clone(), Box::new(project(b, r, j, by))),
        N::Prim(p, a) => N::Prim(p.clone(), a.iter().map(|a| project(a, r, j, by)).collect()),
        N::Op(o, a) => N::Op(*o, a.iter().map(|a| project(a, r, j, by)).collect()),
        N::If(b) => N::If(Box::new([
            project(&b[0], r, j, by),
            project(&b[1], r, j, by),
            project(&b[2], r, j, by),
        ])),
        N::Let(k, v, val, b) => N::Let(*k, *v, Box::new(project(val, r, j, by)), Box::new(project(b, r, j, by))),
        N::Pack(a) => N::Pack(Box::new(project(a, r, j, by))),
        n => n.clone(),
    };
    t(n, span)
}
