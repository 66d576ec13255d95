//! A `let`-bound tuple of filter results taken apart: `let p (tuple a b) body`, with `p`
//! read only as `get #k p`, is `let p0 a (let p1 b body')` with each `get #k p` read as `pk`
//! (`split_tuple_lets`), components that hold no filter result bound first and components no
//! projection reads dropped. The back end bounds a filter result's length where a filter is bound
//! by `let`, `toX` or `at`; a component of a bound tuple has no such binder of its own.
//!
//! Side conditions: the tuple is written out (`tuple …` as the bound value), the variable holds
//! a filter result in some component (other programs keep their formulation), every use of it
//! is a projection, and the result type-checks (a body returning two of the lengths, which
//! would escape their `let`s, keeps the tuple).

use super::super::{t, Cx, N, T};
use ir::{Op, Program, VarId};
use typeck::TypeInfo;

/// The program with every `let`-bound tuple of filter results read only through projections
/// bound component by component (`normalise_lets`), and its types; `None` when it has none
/// or the result does not type-check. The driver applies it to every program it compiles.
pub fn split_tuple_lets(prog: &Program, info: &TypeInfo) -> Option<(Program, TypeInfo)> {
    let mut cx = Cx {
        prog,
        info,
        vars: prog.vars.clone(),
        types: vec![],
        changed: false,
    };
    let body = cx.tree(prog.body);
    let body = cx.split_tuple_lets(body);
    cx.finish(body)
}

impl Cx<'_> {
    /// Every `let` of a written-out tuple holding filter results read only through projections
    /// in `e` (bottom-up): one `let` per component.
    fn split_tuple_lets(&mut self, e: T) -> T {
        let e = self.map_kids(e, Self::split_tuple_lets);
        let span = e.span;
        match e.n {
            N::Let(kind, v, value, body)
                if matches!(value.n, N::Op(Op::Tuple, _))
                    && self.holds_exists(v)
                    && projections(&body, v).is_some_and(|n| n == super::super::uses(&body, v, false).0) =>
            {
                let N::Op(Op::Tuple, comps) = value.n else {
                    unreachable!("matched above")
                };
                let vars: Vec<VarId> = comps.iter().map(|_| self.fresh("p", span)).collect();
                let mut out = project(*body, v, &vars);
                // Components no projection reads are dropped; filter results are bound last,
                // innermost (an array computed inside a filter result's binding would share
                // its kernel).
                let mut bound: Vec<(T, VarId, bool)> = vec![];
                for (k, (c, pv)) in comps.into_iter().zip(vars).enumerate() {
                    if super::super::uses(&out, pv, false).0 > 0 {
                        bound.push((c, pv, self.component_exists(v, k)));
                    }
                }
                bound.sort_by_key(|(_, _, exists)| *exists);
                for (c, pv, _) in bound.into_iter().rev() {
                    out = t(N::Let(kind, pv, Box::new(c), Box::new(out)), span);
                }
                self.changed = true;
                out
            }
            n => t(n, span),
        }
    }

    /// Whether `v` holds a filter result: its type, unpacked by its binder, has a length the
    /// type checker made up for one.
    fn holds_exists(&self, v: VarId) -> bool {
        self.info
            .var_types
            .get(v.index())
            .cloned()
            .flatten()
            .is_some_and(|ty| unpacked(&ty))
    }

    /// Whether component `k` of the tuple `v` holds a filter result.
    fn component_exists(&self, v: VarId, k: usize) -> bool {
        match self.info.var_types.get(v.index()).cloned().flatten() {
            Some(ir::Type::Tuple(ts)) => ts.get(k).is_some_and(unpacked),
            _ => false,
        }
    }
}

/// Whether `t` holds a filter result, packed or unpacked (an array length the type checker
/// made up for one).
fn unpacked(t: &ir::Type) -> bool {
    match t {
        ir::Type::Exists(_) => true,
        ir::Type::Array(e, n) => !n.free_vars_of_kind(arith::VarKind::Existential).is_empty() || unpacked(e),
        ir::Type::Tuple(ts) => ts.iter().any(unpacked),
        ir::Type::Scalar(_) | ir::Type::Vector(..) | ir::Type::Fun(..) => false,
    }
}

/// The number of `get #k v` in `e`; `None` where `v` is bound again inside it.
fn projections(e: &T, v: VarId) -> Option<usize> {
    match &e.n {
        N::Op(Op::Get(_), a) if matches!(&a[..], [T { n: N::Var(x), .. }] if *x == v) => Some(1),
        N::Var(_) | N::Lit(_) => Some(0),
        N::Lambda(ps, b) => (!ps.contains(&v)).then(|| projections(b, v)).flatten(),
        N::Prim(_, a) | N::Op(_, a) => a.iter().map(|x| projections(x, v)).sum(),
        N::If(b) => b.iter().map(|x| projections(x, v)).sum(),
        N::Let(_, x, val, body) => {
            if *x == v {
                return None;
            }
            Some(projections(val, v)? + projections(body, v)?)
        }
        N::Pack(a) => projections(a, v),
    }
}

/// `e` with every `get #k v` read as `vars[k]`.
fn project(e: T, v: VarId, vars: &[VarId]) -> T {
    let span = e.span;
    let n = match e.n {
        N::Op(Op::Get(k), a) if matches!(&a[..], [T { n: N::Var(x), .. }] if *x == v) => N::Var(vars[usize::from(k)]),
        N::Lambda(ps, b) => N::Lambda(ps, Box::new(project(*b, v, vars))),
        N::Prim(p, a) => N::Prim(p, a.into_iter().map(|x| project(x, v, vars)).collect()),
        N::Op(o, a) => N::Op(o, a.into_iter().map(|x| project(x, v, vars)).collect()),
        N::If(b) => {
            let [c, x, y] = *b;
            N::If(Box::new([
                project(c, v, vars),
                project(x, v, vars),
                project(y, v, vars),
            ]))
        }
        N::Let(k, x, val, body) => N::Let(
            k,
            x,
            Box::new(project(*val, v, vars)),
            Box::new(project(*body, v, vars)),
        ),
        N::Pack(a) => N::Pack(Box::new(project(*a, v, vars))),
        n @ (N::Var(_) | N::Lit(_)) => n,
    };
    t(n, span)
}

#[cfg(test)]
mod tests {
    /// The program's body printed after `split_tuple_lets`, or `None` where it keeps it.
    fn split(src: &str) -> Option<String> {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        super::split_tuple_lets(&prog, &info).map(|(p, _)| ir::print::program(&p))
    }

    #[test]
    fn a_let_bound_tuple_of_filter_results_is_bound_component_by_component() {
        // Two filter results, one of them read; a filter result beside an array, both read.
        let two = "(lift (N) ((array-type float N))
          (lambda (xs)
            (let p (tuple (filterGlb (lambda (x) (> x 0.0f)) xs) (filterGlb (lambda (x) (< x 0.0f)) xs))
              (mapGlb (lambda (x) (* x 2.0f)) (get #0 p)))))";
        let text = split(two).expect("split");
        assert!(!text.contains("get"), "{text}");
        let mixed = "(lift (N) ((array-type float N))
          (lambda (xs)
            (let p (tuple (filterGlb (lambda (x) (> x 0.0f)) xs) (mapGlb (lambda (x) (* x 3.0f)) xs))
              (mapGlb (lambda (x) (+ x (at 0 (get #1 p)))) (get #0 p)))))";
        let text = split(mixed).expect("split");
        assert!(!text.contains("get"), "{text}");
    }

    #[test]
    fn tuples_used_whole_or_without_filter_results_stay_bound() {
        // `p` itself is the result: not only projected.
        let whole = "(lift (N) ((array-type float N))
          (lambda (xs) (let p (tuple (filterGlb (lambda (x) (> x 0.0f)) xs) xs) p)))";
        assert_eq!(split(whole), None);
        // Both filter results in a tuple result: bound apart, their lengths would escape their
        // `let`s (the type checker packs back only an outermost length), so the tuple stays.
        let result = "(lift (N) ((array-type float N))
          (lambda (xs)
            (let p (tuple (filterGlb (lambda (x) (> x 0.0f)) xs) (filterGlb (lambda (x) (< x 0.0f)) xs))
              (tuple (mapGlb (lambda (x) (* x 2.0f)) (get #0 p)) (get #1 p)))))";
        assert_eq!(split(result), None);
        // No filter result: the user's formulation stays.
        let plain = "(lift (N) ((array-type float N))
          (lambda (xs) (let p (tuple xs xs) (mapGlb (lambda (x) (* x 2.0f)) (get #0 p)))))";
        assert_eq!(split(plain), None);
    }
}
