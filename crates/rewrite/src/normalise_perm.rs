//! Normalisation of a reduction of a commutative operator over a permutation of its input.
//!
//! **Strided partial reductions**: `reduce ⊕ z (join (map (λc. reduce ⊕ z c) (transpose
//! (split k xs))))` = `reduce ⊕ z xs`: the columns of `split k xs` are the elements of `xs`
//! taken `k` apart, a permutation of them, and a reduction of a commutative, associative
//! operator does not depend on the order of its operands.
//!
//! Side conditions: `⊕` is `+`, `*`, `min` or `max` (in either operand order) in both
//! reductions, and `z` one literal, the neutral element of `⊕` (any for `min` and `max`).
//! For floats `+` and `*` are reassociated, which changes the rounding within the
//! interpreter's float error bounds, as the two-level reduction (`split k` without the
//! `transpose`) already is.
//!
//! Why: the transpose makes each partial sum read `xs` `k` apart (uncoalesced, and only `k`
//! work-items), and no rule removes it; the flat reduction gets every whole-array reduction
//! variant, the one-launch grid reductions included.

use super::{neutral, operator, same_lit, t, Cx, N, T};
use ir::Prim;

impl Cx<'_> {
    /// `e` with every strided partial reduction in it (bottom-up) a flat reduction.
    pub(super) fn strided_reductions(&mut self, e: T) -> T {
        let span = e.span;
        let n = match e.n {
            N::Lambda(ps, b) => N::Lambda(ps, Box::new(self.strided_reductions(*b))),
            N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| self.strided_reductions(a)).collect()),
            N::Op(o, a) => N::Op(o, a.into_iter().map(|a| self.strided_reductions(a)).collect()),
            N::If(b) => {
                let [c, x, y] = *b;
                N::If(Box::new([
                    self.strided_reductions(c),
                    self.strided_reductions(x),
                    self.strided_reductions(y),
                ]))
            }
            N::Let(k, v, val, b) => N::Let(
                k,
                v,
                Box::new(self.strided_reductions(*val)),
                Box::new(self.strided_reductions(*b)),
            ),
            N::Pack(a) => N::Pack(Box::new(self.strided_reductions(*a))),
            n => n,
        };
        match n {
            N::Prim(Prim::Reduce(ir::ReduceKind::Plain), mut a) => {
                if let Some(xs) = strided(&a) {
                    self.changed = true;
                    a[2] = xs;
                }
                t(N::Prim(Prim::Reduce(ir::ReduceKind::Plain), a), span)
            }
            n => t(n, span),
        }
    }
}

/// For `reduce ⊕ z (join (map (λc. reduce ⊕ z c) (transpose (split k xs))))`: `xs`.
fn strided(args: &[T]) -> Option<T> {
    let (f, z, x) = (&args[0], &args[1], &args[2]);
    let op = operator(f)?;
    if !matches!(z.n, N::Lit(_)) || !neutral(op, z) {
        return None;
    }
    let N::Prim(Prim::Join, j) = &x.n else { return None };
    let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &j[0].n else {
        return None;
    };
    let N::Prim(Prim::Transpose, tr) = &m[1].n else {
        return None;
    };
    let N::Prim(Prim::Split(_), s) = &tr[0].n else {
        return None;
    };
    let N::Lambda(cs, body) = &m[0].n else { return None };
    let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), inner) = &body.n else {
        return None;
    };
    let column = matches!(inner[2].n, N::Var(c) if cs.len() == 1 && c == cs[0]);
    (column && operator(&inner[0]) == Some(op) && same_lit(&inner[1], z)).then(|| s[0].clone())
}
