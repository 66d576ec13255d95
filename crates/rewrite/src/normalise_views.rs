//! Normalisation of compositions of layout primitives that read a matrix transposed: a view
//! that is a transpose, and a stencil over the columns of a matrix.
//!
//! **A view that is a transpose** (`V` built of `split`, `join`, `transpose` and maps of
//! them, `map (λx. V'[x])`, over a variable `m` of type `[[T]N]M`):
//!
//! `V[m]` = `transpose m` when `V[m]` has type `[[T]M]N` and its element `[j][i]` is `m`'s
//! `[i][j]` for every `j < N`, `i < M`; and `V[m]` = `m` when it is `m`'s `[j][i]` with the
//! type of `m`.
//!
//! Side conditions: the element read is computed symbolically, by composing the index
//! functions of the steps from the result inwards (`split k` reads `[a][b]` at `a·k + b`,
//! `join` of rows of `b` reads `[a]` at `[a / b][a % b]`, `transpose` swaps `[a][b]`, a map's
//! function applies below the map's own index), and `arith` must simplify the composition to
//! exactly `[i][j]` (or `[j][i]`): `(i / 8)·8 + i % 8` is `i` for every `i ≥ 0`, which is
//! what makes tiles taken apart and put back together the identity. A split's lengths are exact
//! (`n /^ k`): the type checker guarantees `k | n`. Only a view with a map of a layout
//! primitive (a step below the outermost index) is rewritten: the others are already read by
//! the rules as written.
//!
//! Why: a matrix transposed as a grid of tiles, each tile transposed (`map transpose (split 8
//! (map (split 8) m))` transposed and joined back), is `transpose m`, but no rule reads a map of
//! views, and the result was copied one row a work-item, 12.5× slower than the tiled copy the
//! rules derive for `transpose m` (`bench/results/forms-fixes-nvidia-h200-2026-12-02.md`).
//!
//! **A stencil over columns** (`P` either `pad-clamp l r` or nothing, `[join]` either `join`
//! or nothing):
//!
//! `transpose (map (λc. [join] (map h (slide n s P[c]))) (transpose X))` =
//! `map (λw. [join] (map h (transpose w))) (slide n s P[X])`.
//!
//! Side condition: `h` does not read `c` (it sees each window alone). Both read element `[i][j]`
//! as `h` of window `i` of column `j`: windows of `n` rows, each transposed into its `W`
//! columns of `n`. Why: as written the columns are a transposed copy of the input and the
//! result a transposed copy of the columns' results (12× the column pass written on rows,
//! `bench/results/forms-fixes-nvidia-h200-2026-12-02.md`); on rows it is the stencil the rules
//! and the back end read directly.

use super::{t, Cx, N, T};
use arith::{ArithExpr, Range, VarKind};
use ir::{Prim, Type, VarId};

impl Cx<'_> {
    /// The equalities of the module doc at the root of `e`, if one applies.
    pub(super) fn layouts(&mut self, e: &T) -> Option<T> {
        if let Some(v) = self.view_as_transpose(e) {
            self.changed = true;
            return Some(v);
        }
        match &e.n {
            N::Prim(Prim::Transpose, a) => self.column_stencil(&a[0]),
            _ => None,
        }
    }

    /// The stencil-over-columns equality of the module doc, for `transpose` of `xs`.
    fn column_stencil(&mut self, xs: &T) -> Option<T> {
        let span = xs.span;
        let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &xs.n else {
            return None;
        };
        let (N::Lambda(cs, body), N::Prim(Prim::Transpose, x)) = (&m[0].n, &m[1].n) else {
            return None;
        };
        if cs.len() != 1 {
            return None;
        }
        let c = cs[0];
        let (joined, inner) = match &body.n {
            N::Prim(Prim::Join, j) => (true, &j[0]),
            _ => (false, &**body),
        };
        let N::Prim(Prim::Map(ir::MapKind::Plain), hm) = &inner.n else {
            return None;
        };
        let N::Prim(slide @ Prim::Slide(..), sa) = &hm[1].n else {
            return None;
        };
        let padded = match &sa[0].n {
            N::Var(v) if *v == c => None,
            N::Prim(pad @ Prim::PadClamp(..), pa) if matches!(pa[0].n, N::Var(v) if v == c) => Some(pad.clone()),
            _ => return None,
        };
        let h = &hm[0];
        let mut free = std::collections::BTreeSet::new();
        super::free_vars(h, &mut vec![], &mut free);
        if free.contains(&c) {
            return None;
        }
        self.changed = true;
        let mut rows = x[0].clone();
        if let Some(pad) = padded {
            rows = t(N::Prim(pad, vec![rows]), span);
        }
        let windows = t(N::Prim(slide.clone(), vec![rows]), span);
        let w = self.fresh("window", span);
        let cols = t(N::Prim(Prim::Transpose, vec![t(N::Var(w), span)]), span);
        let mut each = t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![h.clone(), cols]), span);
        if joined {
            each = t(N::Prim(Prim::Join, vec![each]), span);
        }
        let f = t(N::Lambda(vec![w], Box::new(each)), span);
        Some(t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, windows]), span))
    }
}

/// One re-indexing of a view, at some depth.
#[derive(Clone, Debug)]
enum Step {
    /// `split k`
    Split(ArithExpr),
    /// `join` of rows of this length
    Join(ArithExpr),
    Transpose,
}

/// A view of the variable `leaf`: the steps a result index goes through, outermost first, each
/// below its number of leading indices, and the view's shape.
struct Chain {
    leaf: VarId,
    steps: Vec<(usize, Step)>,
    shape: Vec<ArithExpr>,
}

/// The lengths of the dimensions of an array type, outermost first (none for a scalar).
fn dims(ty: &Type) -> Vec<ArithExpr> {
    let mut out = vec![];
    let mut ty = ty;
    while let Type::Array(el, n) = ty {
        out.push(n.clone());
        ty = el;
    }
    out
}

impl Cx<'_> {
    /// `e` as a view of one variable, or `None`; `env` gives the shapes of the map parameters
    /// in scope (which the type table of the program as written does not have).
    fn chain(&self, e: &T, env: &[(VarId, Vec<ArithExpr>)]) -> Option<Chain> {
        match &e.n {
            N::Var(v) => {
                let shape = match env.iter().rev().find(|(x, _)| x == v) {
                    Some((_, s)) => s.clone(),
                    None => dims(&self.info.var_types.get(v.index()).cloned().flatten()?),
                };
                Some(Chain {
                    leaf: *v,
                    steps: vec![],
                    shape,
                })
            }
            N::Prim(Prim::Split(k), a) => {
                let mut c = self.chain(&a[0], env)?;
                if c.shape.is_empty() {
                    return None;
                }
                let n = c.shape.remove(0);
                c.shape.insert(0, k.clone());
                c.shape.insert(0, n.div_assume_exact(k));
                c.steps.insert(0, (0, Step::Split(k.clone())));
                Some(c)
            }
            N::Prim(Prim::Join, a) => {
                let mut c = self.chain(&a[0], env)?;
                if c.shape.len() < 2 {
                    return None;
                }
                let (rows, b) = (c.shape.remove(0), c.shape.remove(0));
                c.shape.insert(0, rows.mul(&b));
                c.steps.insert(0, (0, Step::Join(b)));
                Some(c)
            }
            N::Prim(Prim::Transpose, a) => {
                let mut c = self.chain(&a[0], env)?;
                if c.shape.len() < 2 {
                    return None;
                }
                c.shape.swap(0, 1);
                c.steps.insert(0, (0, Step::Transpose));
                Some(c)
            }
            N::Prim(Prim::Map(ir::MapKind::Plain), a) => {
                let N::Lambda(ps, body) = &a[0].n else { return None };
                if ps.len() != 1 {
                    return None;
                }
                let outer = self.chain(&a[1], env)?;
                if outer.shape.is_empty() {
                    return None;
                }
                let mut inner_env = env.to_vec();
                inner_env.push((ps[0], outer.shape[1..].to_vec()));
                let inner = self.chain(body, &inner_env)?;
                if inner.leaf != ps[0] {
                    return None;
                }
                let mut steps: Vec<(usize, Step)> = inner.steps.into_iter().map(|(d, s)| (d + 1, s)).collect();
                steps.extend(outer.steps);
                let mut shape = vec![outer.shape[0].clone()];
                shape.extend(inner.shape);
                Some(Chain {
                    leaf: outer.leaf,
                    steps,
                    shape,
                })
            }
            _ => None,
        }
    }

    /// The equality of the module doc at the root of `e`: `transpose m` or `m` for a view of a
    /// matrix `m` that reads it so, else `None`.
    fn view_as_transpose(&self, e: &T) -> Option<T> {
        if !matches!(
            e.n,
            N::Prim(Prim::Map(_) | Prim::Join | Prim::Split(_) | Prim::Transpose, _)
        ) {
            return None;
        }
        let c = self.chain(e, &[])?;
        if !c.steps.iter().any(|(d, _)| *d > 0) || c.shape.len() != 2 {
            return None;
        }
        let leaf = dims(&self.info.var_types.get(c.leaf.index()).cloned().flatten()?);
        if leaf.len() != 2 {
            return None;
        }
        let var = |name: &str, n: &ArithExpr| ArithExpr::var_of_kind(VarKind::Generated, name, Range::upto(n.clone()));
        let (j, i) = (var("j", &c.shape[0]), var("i", &c.shape[1]));
        let mut idx = vec![j.clone(), i.clone()];
        for (depth, step) in &c.steps {
            let need = if matches!(step, Step::Join(_)) { 1 } else { 2 };
            if idx.len() < depth + need {
                return None;
            }
            let mut rest = idx.split_off(*depth);
            match step {
                Step::Split(k) => {
                    let (a, b) = (rest.remove(0), rest.remove(0));
                    rest.insert(0, a.mul(k).add(&b));
                }
                Step::Join(b) => {
                    let a = rest.remove(0);
                    rest.insert(0, a.rem(b));
                    rest.insert(0, a.div(b));
                }
                Step::Transpose => rest.swap(0, 1),
            }
            idx.append(&mut rest);
        }
        let span = e.span;
        let m = t(N::Var(c.leaf), span);
        if idx == [i.clone(), j.clone()] && c.shape[0] == leaf[1] && c.shape[1] == leaf[0] {
            Some(t(N::Prim(Prim::Transpose, vec![m]), span))
        } else if idx == [j, i] && c.shape == leaf {
            Some(m)
        } else {
            None
        }
    }
}
