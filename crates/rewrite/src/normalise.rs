//! Normalisation before saturation: the forms in which users write one computation are brought
//! to one form, so that every rule (written once, for that form) sees every formulation, and
//! the e-graph does not grow with copies of the same program in other spellings.
//!
//! Why a pass and not bidirectional rules: the differences are in binders (`let`s made by the
//! reader's K-normalization, the `λs` of a map over a one-element reduction, projections of a
//! zip's pairs), which egg's first-order patterns can only move with substitution appliers, and
//! every such rule would add the whole rewritten program again to the e-graph. On the IR the
//! equalities are plain substitutions. Each holds for every program (no cost decides them):
//! - **`let`-bound ≡ inline**: `let x v b` = `b[v/x]` when `v` is an array (not existential;
//!   scalar `let`s are arithmetic that encoding keeps opaque) and either only re-indexes
//!   variables (`get`, `zip`, `transpose`, `split`, `join`, …) or is high level and `x` occurs
//!   once in `b`, outside its lambdas (so `v` is computed as often as before); the other `let`s
//!   stay (a value read inside a map is computed once, by a kernel of its own; and a program
//!   that fixes part of its mapping, `toLocal` copies say, keeps its `let`s);
//! - **`at 0` of a one-element array**: `map (λr. B[at 0 R]) X` =
//!   `join (map (λr. map (λs. B[s]) R) X)`, `R` a reduction (or a map of one) reading nothing
//!   bound inside `B`; two of them are taken together, `map (λs. B[get #0 s, get #1 s]) (zip R1
//!   R2)`, as the suite's gesummv reads; an `R` reading the `let`s `B` starts with is mapped
//!   inside them;
//! - **identity maps**: `map (λs. s) X` = `X` for a computed `X` (a copy of a view stays, and
//!   so does a low-level `mapSeq (λs. s)`: a copy into memory);
//! - **two-level reductions**: `reduce f z (join (map (λc. reduce f z c) (split k xs)))` =
//!   `reduce f z xs` (and with `map g c` for `c`, `reduce f z (map g xs)`: chunked dot products), `f` `+`, `*`, `min` or `max` (in either operand order) and `z` its neutral
//!   element (any `z` for `min` and `max`): the rules derive the partial reductions of every
//!   chunk size, including `k`, from the flat one;
//! - **`transpose (transpose x)`** = `x`, and a view of `x` built with maps of layouts that reads
//!   it transposed (tiles transposed in a grid of tiles) = `transpose x` (`normalise_views`);
//! - **a view as the result** (`transpose m`, a `split` of a parameter) is its copy, `map (λr.
//!   map (λx. x) r) (transpose m)`: the copy the suite's transpose asks for, which the rules
//!   tile (the back end copies a view result one row a work-item);
//! - **a zip of maps** (`normalise_zip`): `map (λt. B) (zip (map f a) (map g b))` = `map (λu.
//!   B[f (get #0 u), g (get #1 u)]) (zip a b)`, one array where `a` and `b` are one; and a
//!   reduction's, `reduce h z (zip (map f a) b)` = `reduce h z (map (λu. (f u₀, u₁)) (zip a b))`;
//! - **a host-level map of a reduction's result**: `map g (reduce f z xs)` =
//!   `let r (reduce f z xs) (map g r)` at host level, so the reduction is its own kernel (with
//!   every whole-array reduction rule) rather than a loop inside the map's single work-item;
//! - **a zip in a zip** (`normalise_zip`): `map (λu. B) (zip (zip a b) c)` = `map (λv. B')
//!   (zip a b c)`, the inner pairs read only through `get`s; and a component no `get` reads is
//!   left out of the zip (`zip a c`, or `a` alone);
//! - **reductions taken together** (`normalise_tuple`): two reductions of one array are one
//!   reduction of pairs; its split is explored too (`alternative`), the cost model chooses;
//! - **small constant powers**: `pow x 2` = `x·x`, `pow x 3` = `x·x·x`, `pow x 1.5` = `x·sqrt x`;
//! - **commuted operator lambdas**: `(lambda (a b) (op b a))` = `(lambda (a b) (op a b))` for
//!   `+`, `*`, `min`, `max` (`encode` recognises either as the operator, `Data::assoc`; one
//!   spelling makes one program text, so the variants of both are the same).
//!
//! Definitions are inlined by the reader. The result is type-checked; a program the pass would
//! make ill-typed is explored as written.
//!
//! Not normalised: the order of a `zip`'s operands and of tuple components (the rules and the
//! lowering read dot products either way round: `zip x col` and `zip col x` get the same
//! column-block kernel once their `let`s are inlined), and an index array `generate n (λi. i)`
//! zipped with data (the language has no other spelling of a map's own index).

#[path = "normalise_arrays.rs"]
mod arrays;
#[path = "normalise_index.rs"]
mod index;
#[path = "normalise_perm.rs"]
mod perm;
#[path = "normalise_scalar.rs"]
mod scalar;
#[path = "normalise_tuple.rs"]
mod tuple;
#[path = "normalise_views.rs"]
mod views;
#[path = "normalise_window.rs"]
mod window;
#[path = "normalise_zip.rs"]
mod zip;

use ir::{Expr, ExprId, LetKind, Lit, Op, Prim, Program, Span, Type, VarId};
use std::collections::BTreeSet;
use typeck::TypeInfo;

/// An expression as a tree (the arena's nodes, children owned), with the span of its node.
#[derive(Clone, Debug)]
struct T {
    n: N,
    span: Span,
}

#[derive(Clone, Debug)]
enum N {
    Var(VarId),
    Lit(Lit),
    Lambda(Vec<VarId>, Box<T>),
    Prim(Prim, Vec<T>),
    Op(Op, Vec<T>),
    If(Box<[T; 3]>),
    Let(LetKind, VarId, Box<T>, Box<T>),
    Pack(Box<T>),
}

/// The program with its formulations normalised, and its types; `None` when nothing changed
/// or the normalised program does not type-check.
pub fn normalise(prog: &Program, info: &TypeInfo) -> Option<(Program, TypeInfo)> {
    let mut cx = Cx {
        prog,
        info,
        vars: prog.vars.clone(),
        types: vec![],
        changed: false,
    };
    let body = cx.tree(prog.body);
    let body = cx.index_maps(body);
    let body = cx.norm(body, true);
    let body = cx.strided_reductions(body);
    let body = cx.elementwise_reductions(body);
    let body = cx.scalar_result(body);
    let body = cx.fuse_reductions(body);
    let body = cx.copied_view(body, info.ty(prog.body));
    cx.finish(body)
}

/// The other side of the two-way equalities that the cost model decides (`normalise_tuple`):
/// the (normalised) program with its reductions of pairs split in two; `None` when it has none.
pub fn alternative(prog: &Program, info: &TypeInfo) -> Option<(Program, TypeInfo)> {
    let mut cx = Cx {
        prog,
        info,
        vars: prog.vars.clone(),
        types: vec![],
        changed: false,
    };
    let body = cx.tree(prog.body);
    let body = cx.split_reductions(body);
    // each reduction split off reads only its own arrays of the zip they shared
    let body = if cx.changed { cx.norm(body, true) } else { body };
    cx.finish(body)
}

impl Cx<'_> {
    /// The program of the normalised body, type-checked; `None` when nothing changed.
    fn finish(self, body: T) -> Option<(Program, TypeInfo)> {
        let (prog, cx) = (self.prog, self);
        if !cx.changed {
            return None;
        }
        let mut out = Program {
            sizes: prog.sizes.clone(),
            size_spans: prog.size_spans.clone(),
            params: prog.params.clone(),
            exprs: vec![],
            spans: vec![],
            vars: cx.vars,
            body: ExprId(0),
        };
        out.body = emit(&mut out, &body);
        let info = typeck::infer(&out).ok()?;
        Some((out, info))
    }
}

struct Cx<'a> {
    prog: &'a Program,
    info: &'a TypeInfo,
    vars: Vec<ir::VarInfo>,
    /// The types of the variables the pass binds that type-checking needs (`normalise_window`).
    types: Vec<(VarId, Type)>,
    changed: bool,
}

fn t(n: N, span: Span) -> T {
    T { n, span }
}

impl Cx<'_> {
    fn tree(&self, id: ExprId) -> T {
        let span = self.prog.span(id);
        let n = match self.prog.expr(id) {
            Expr::Var(v) => N::Var(*v),
            Expr::Lit(l) => N::Lit(l.clone()),
            Expr::Lambda { params, body } => N::Lambda(params.clone(), Box::new(self.tree(*body))),
            Expr::Prim { prim, args } => N::Prim(prim.clone(), args.iter().map(|a| self.tree(*a)).collect()),
            Expr::Op { op, args } => N::Op(*op, args.iter().map(|a| self.tree(*a)).collect()),
            Expr::If { cond, then, els } => N::If(Box::new([self.tree(*cond), self.tree(*then), self.tree(*els)])),
            Expr::Let { kind, var, value, body } => {
                N::Let(*kind, *var, Box::new(self.tree(*value)), Box::new(self.tree(*body)))
            }
            Expr::Pack(e) => N::Pack(Box::new(self.tree(*e))),
        };
        t(n, span)
    }

    fn fresh(&mut self, base: &str, span: Span) -> VarId {
        let taken: BTreeSet<&str> = self.vars.iter().map(|v| v.name.as_str()).collect();
        let name = (0..)
            .map(|i| format!("{base}{i}"))
            .find(|n| !taken.contains(n.as_str()))
            .expect("a free name");
        self.vars.push(ir::VarInfo { name, span });
        VarId(self.vars.len() as u32 - 1)
    }

    /// Whether the variable holds an array of known lengths (typeck's type): the `let`s the
    /// pass may inline. Scalar `let`s are the user's arithmetic, which encoding keeps opaque,
    /// and an existential array must stay bound where the type checker unpacks it.
    fn plain_array(&self, v: VarId) -> bool {
        match self.info.var_types.get(v.index()).cloned().flatten() {
            Some(ty @ Type::Array(..)) => !has_exists(&ty),
            _ => false,
        }
    }

    /// A result that is a view of the inputs (`transpose m`, not a parameter itself) is their
    /// copy: `map (λr. map (λx. x) r) (transpose m)` for a matrix, so the rules that tile a copy
    /// see it; the back end's own copy of a view result is one work-item a row.
    fn copied_view(&mut self, e: T, ty: &Type) -> T {
        fn copy(cx: &mut Cx, e: T, ty: &Type, span: Span) -> T {
            let Type::Array(el, _) = ty else { return e };
            let x = cx.fresh("x", span);
            let inner = copy(cx, t(N::Var(x), span), el, span);
            let f = t(N::Lambda(vec![x], Box::new(inner)), span);
            t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![f, e]), span)
        }
        let scalars = |mut ty: &Type| loop {
            match ty {
                Type::Array(el, _) => ty = el,
                Type::Scalar(_) | Type::Vector(..) => return true,
                _ => return false,
            }
        };
        if !is_view(&e) || matches!(e.n, N::Var(_)) || !matches!(ty, Type::Array(..)) || !scalars(ty) {
            return e;
        }
        self.changed = true;
        let span = e.span;
        copy(self, e, ty, span)
    }

    /// Normalises bottom-up; `host` while no lambda encloses `e`.
    fn norm(&mut self, e: T, host: bool) -> T {
        let span = e.span;
        let n = match e.n {
            N::Lambda(ps, b) => N::Lambda(ps, Box::new(self.norm(*b, false))),
            N::Prim(p, args) => N::Prim(p, args.into_iter().map(|a| self.norm(a, host)).collect()),
            N::Op(o, args) => N::Op(o, args.into_iter().map(|a| self.norm(a, host)).collect()),
            N::If(b) => {
                let [c, x, y] = *b;
                N::If(Box::new([self.norm(c, host), self.norm(x, host), self.norm(y, host)]))
            }
            N::Let(k, v, val, body) => {
                let val = self.norm(*val, host);
                let once = || {
                    let (n, under) = uses(&body, v, false);
                    n == 1 && !under && high_level(&val)
                };
                let elementwise = !host && self.inline_elementwise(v, &val, &body);
                // an array of components of another (`map (λp. vget #3 p) pos`) is a view too
                let cheap = is_view(&val) || zip::projections(&val);
                if k == LetKind::Let && self.plain_array(v) && (cheap || once() || elementwise) {
                    self.changed = true;
                    let body = subst(*body, v, &val);
                    return self.norm(body, host);
                }
                N::Let(k, v, Box::new(val), Box::new(self.norm(*body, host)))
            }
            n => n,
        };
        self.rewrite(t(n, span), host)
    }

    /// The equalities of the module doc at the root of `e` (its children normalised).
    fn rewrite(&mut self, e: T, host: bool) -> T {
        let span = e.span;
        // tiles transposed in a grid of tiles = transpose m; a stencil down columns = one of rows
        if let Some(v) = self.layouts(&e) {
            return self.rewrite(v, host);
        }
        match e.n {
            // λ(a b). op b a = λ(a b). op a b, op commutative
            N::Lambda(ps, mut body) if ps.len() == 2 => {
                if let N::Op(Op::Add | Op::Mul | Op::Min | Op::Max, args) = &mut body.n {
                    if matches!((&args[0].n, &args[1].n), (N::Var(x), N::Var(y)) if *x == ps[1] && *y == ps[0]) {
                        self.changed = true;
                        args.swap(0, 1);
                    }
                }
                t(N::Lambda(ps, body), span)
            }
            // transpose (transpose x) = x
            N::Prim(Prim::Transpose, mut args) if matches!(&args[0].n, N::Prim(Prim::Transpose, _)) => {
                self.changed = true;
                let N::Prim(_, mut inner) = args.remove(0).n else {
                    unreachable!()
                };
                inner.remove(0)
            }
            N::Prim(Prim::Map(ir::MapKind::Plain), mut args) => {
                let k = ir::MapKind::Plain;
                // map (λt. B) (zip (map f a) …) = map (λu. B[f (get #0 u)…]) (zip a …)
                if let Some(e) = self.zip_of_maps(&args[0], &args[1]) {
                    return self.rewrite(e, host);
                }
                // map (λu. B) (zip (zip a b) c) = map (λv. B') (zip a b c)
                if let Some(e) = self.flat_zip(&args[0], &args[1]) {
                    return self.rewrite(e, host);
                }
                // map (λu. B) (zip a b c) = map (λv. B') (zip a c), B reading no `get #1 u`
                if let Some(e) = self.unread_components(&args[0], &args[1]) {
                    return self.rewrite(e, host);
                }
                // map (λs. s) X = X, X computed (a copy of a view is what a program that
                // copies, a transpose, asks for)
                if let N::Lambda(ps, b) = &args[0].n {
                    if ps.len() == 1 && matches!(b.n, N::Var(v) if v == ps[0]) && !is_view(&args[1]) {
                        self.changed = true;
                        return args.remove(1);
                    }
                }
                // map g (reduce f z xs) = let r (reduce f z xs) (map g r), at host level
                if host && matches!(args[1].n, N::Prim(Prim::Reduce(ir::ReduceKind::Plain), _)) {
                    self.changed = true;
                    let r = self.fresh("reduced", span);
                    let red = args.remove(1);
                    let rspan = red.span;
                    args.push(t(N::Var(r), rspan));
                    let body = t(N::Prim(Prim::Map(k), args), span);
                    return t(N::Let(LetKind::Let, r, Box::new(red), Box::new(body)), span);
                }
                match self.lift_at0(k, args, span) {
                    Ok(e) => e,
                    Err(args) => t(N::Prim(Prim::Map(k), args), span),
                }
            }
            // pow x 2 = x·x, pow x 3 = x·x·x, pow x 1.5 = x·sqrt x
            N::Op(Op::Pow, args) if power(&args[1]).is_some() => {
                self.changed = true;
                let mut args = args;
                let p = power(&args[1]).expect("matched");
                let x = args.swap_remove(0);
                let (v, bind) = match x.n {
                    N::Var(v) => (v, None),
                    _ => (self.fresh("base", span), Some(x)),
                };
                let var = || t(N::Var(v), span);
                let mul = |a: T, b: T| t(N::Op(Op::Mul, vec![a, b]), span);
                let body = match p {
                    Power::Square => mul(var(), var()),
                    Power::Cube => mul(mul(var(), var()), var()),
                    Power::ThreeHalves => mul(var(), t(N::Op(Op::Sqrt, vec![var()]), span)),
                };
                match bind {
                    Some(x) => t(N::Let(LetKind::Let, v, Box::new(x), Box::new(body)), span),
                    None => body,
                }
            }
            N::Prim(Prim::Reduce(k), mut args) => {
                if let Some(xs) = two_level(&args) {
                    self.changed = true;
                    args[2] = xs;
                } else if let Some(xs) = self.reduced_zip_of_maps(&args[2]) {
                    // reduce f z (zip (map g a) b) = reduce f z (map (λu. (g u0, u1)) (zip a b))
                    args[2] = self.rewrite(xs, host);
                }
                t(N::Prim(Prim::Reduce(k), args), span)
            }
            n => t(n, span),
        }
    }

    /// `map (λr. B[at 0 R…]) X` = `join (map (λr. map (λs. B[s…]) R) X)` for the (at most two)
    /// distinct one-element arrays `R` that `B` takes `at 0` of outside any inner lambda and
    /// that read nothing bound inside `B`. When `R` reads the `let`s that `B` starts with
    /// (`B = let c V B'`, a scalar `c`), the map over `R` goes inside them: `join (map (λr. let c
    /// V (map (λs. B'[s…]) R)) X)`. Gives back the arguments when it does not apply.
    fn lift_at0(&mut self, k: ir::MapKind, mut args: Vec<T>, span: Span) -> Result<T, Vec<T>> {
        let N::Lambda(ps, body) = &args[0].n else {
            return Err(args);
        };
        if ps.len() != 1 || k != ir::MapKind::Plain {
            return Err(args);
        }
        let mut found: Vec<T> = vec![];
        collect_at0(body, &mut BTreeSet::new(), &mut found);
        // the lets `B` starts with, when the `R`s are found only under them
        let mut depth = 0;
        if found.is_empty() {
            let mut inner = &**body;
            while let N::Let(LetKind::Let, _, _, b) = &inner.n {
                inner = b;
                depth += 1;
            }
            collect_at0(inner, &mut BTreeSet::new(), &mut found);
        }
        // or in the value of one of those lets (`let pi V (let a (at 0 R) B')`, `R` reading
        // `pi`): the map over `R` goes inside the lets before it
        if found.is_empty() {
            depth = 0;
            let mut inner = &**body;
            while let N::Let(LetKind::Let, _, _, b) = &inner.n {
                inner = b;
                depth += 1;
                collect_at0(inner, &mut BTreeSet::new(), &mut found);
                if !found.is_empty() {
                    break;
                }
            }
        }
        if found.is_empty() || found.len() > 2 {
            return Err(args);
        }
        self.changed = true;
        let (r, body) = match args.remove(0).n {
            N::Lambda(mut ps, body) => (ps.remove(0), *body),
            _ => unreachable!(),
        };
        let mut spine = vec![];
        let mut body = body;
        for _ in 0..depth {
            let N::Let(kind, v, val, b) = body.n else {
                unreachable!()
            };
            spine.push((kind, v, val, body.span));
            body = *b;
        }
        let s = self.fresh("elem", span);
        let sv = t(N::Var(s), span);
        let (body, ones) = if found.len() == 1 {
            let body = replace_at0(body, &found[0], &sv);
            (body, found.remove(0))
        } else {
            let get = |i: u8| t(N::Op(Op::Get(i), vec![sv.clone()]), span);
            let body = replace_at0(body, &found[0], &get(0));
            let body = replace_at0(body, &found[1], &get(1));
            // `tuple (get #0 s) (get #1 s)` of a pair of the zip is the pair itself
            let whole = matches!(&body.n, N::Op(Op::Tuple, c) if c.len() == 2
                && c.iter().enumerate().all(|(i, c)| same(c, &get(i as u8))));
            let body = if whole { sv.clone() } else { body };
            (body, t(N::Prim(Prim::Zip, found), span))
        };
        let inner_fn = t(N::Lambda(vec![s], Box::new(body)), span);
        let mut inner = self.rewrite(
            t(N::Prim(Prim::Map(ir::MapKind::Plain), vec![inner_fn, ones]), span),
            false,
        );
        while let Some((kind, v, val, lspan)) = spine.pop() {
            inner = t(N::Let(kind, v, val, Box::new(inner)), lspan);
        }
        let outer_fn = t(N::Lambda(vec![r], Box::new(inner)), span);
        args.insert(0, outer_fn);
        let mapped = t(N::Prim(Prim::Map(ir::MapKind::Plain), args), span);
        Ok(t(N::Prim(Prim::Join, vec![mapped]), span))
    }
}

pub use tuple::lets::split_tuple_lets;
/// Whether `e` has an existential length anywhere.
fn has_exists(ty: &Type) -> bool {
    match ty {
        Type::Exists(..) => true,
        Type::Array(e, _) => has_exists(e),
        Type::Tuple(ts) => ts.iter().any(has_exists),
        _ => false,
    }
}

/// Whether `e` has no low-level primitive (a mapping, a copy): a program that fixes part of its mapping keeps it.
fn high_level(e: &T) -> bool {
    match &e.n {
        N::Prim(p, a) => {
            let low = match p {
                Prim::Map(k) => *k != ir::MapKind::Plain,
                Prim::Reduce(k) => *k != ir::ReduceKind::Plain,
                Prim::Filter(k) => *k != ir::FilterKind::Plain,
                Prim::To(_) => true,
                _ => false,
            };
            !low && a.iter().all(high_level)
        }
        N::Var(_) | N::Lit(_) => true,
        N::Lambda(_, b) | N::Pack(b) => high_level(b),
        N::Op(_, a) => a.iter().all(high_level),
        N::If(b) => b.iter().all(high_level),
        N::Let(_, _, v, b) => high_level(v) && high_level(b),
    }
}

/// Whether `e` only re-indexes variables (no arithmetic, no function applied): duplicating it
/// duplicates no work.
fn is_view(e: &T) -> bool {
    match &e.n {
        N::Var(_) => true,
        N::Op(Op::Get(_), a) => is_view(&a[0]),
        N::Prim(
            Prim::Zip
            | Prim::Transpose
            | Prim::Split(_)
            | Prim::Join
            | Prim::Slide(..)
            | Prim::PadClamp(..)
            | Prim::ReorderStride(_)
            | Prim::Reverse
            | Prim::AsVector(_)
            | Prim::AsScalar,
            a,
        ) => a.iter().all(is_view),
        _ => false,
    }
}

fn free_vars(e: &T, bound: &mut Vec<VarId>, out: &mut BTreeSet<VarId>) {
    match &e.n {
        N::Var(v) => {
            if !bound.contains(v) {
                out.insert(*v);
            }
        }
        N::Lit(_) => {}
        N::Lambda(ps, b) => {
            let n = bound.len();
            bound.extend(ps);
            free_vars(b, bound, out);
            bound.truncate(n);
        }
        N::Prim(_, a) | N::Op(_, a) => a.iter().for_each(|a| free_vars(a, bound, out)),
        N::If(b) => b.iter().for_each(|a| free_vars(a, bound, out)),
        N::Let(_, v, val, body) => {
            free_vars(val, bound, out);
            bound.push(*v);
            free_vars(body, bound, out);
            bound.pop();
        }
        N::Pack(a) => free_vars(a, bound, out),
    }
}

/// How often `x` occurs in `e`, and whether an occurrence is inside a lambda of `e` (`under`
/// says whether `e` itself is).
fn uses(e: &T, x: VarId, under: bool) -> (usize, bool) {
    let sum = |a: &[T], under: bool| {
        a.iter()
            .map(|a| uses(a, x, under))
            .fold((0, false), |(n, u), (m, v)| (n + m, u || v))
    };
    match &e.n {
        N::Var(y) => (usize::from(*y == x), *y == x && under),
        N::Lit(_) => (0, false),
        N::Lambda(_, b) => uses(b, x, true),
        N::Prim(_, a) | N::Op(_, a) => sum(a, under),
        N::If(b) => sum(&b[..], under),
        N::Let(_, _, val, body) => {
            let (n, u) = uses(val, x, under);
            let (m, v) = uses(body, x, under);
            (n + m, u || v)
        }
        N::Pack(a) => uses(a, x, under),
    }
}

/// `e[v/x]` (binders are distinct variables, so nothing is captured).
fn subst(e: T, x: VarId, v: &T) -> T {
    let span = e.span;
    let n = match e.n {
        N::Var(y) if y == x => return v.clone(),
        N::Lambda(ps, b) => N::Lambda(ps, Box::new(subst(*b, x, v))),
        N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| subst(a, x, v)).collect()),
        N::Op(o, a) => N::Op(o, a.into_iter().map(|a| subst(a, x, v)).collect()),
        N::If(b) => {
            let [c, p, q] = *b;
            N::If(Box::new([subst(c, x, v), subst(p, x, v), subst(q, x, v)]))
        }
        N::Let(k, y, val, body) => N::Let(k, y, Box::new(subst(*val, x, v)), Box::new(subst(*body, x, v))),
        N::Pack(a) => N::Pack(Box::new(subst(*a, x, v))),
        n => n,
    };
    t(n, span)
}

/// Structural equality, spans aside.
fn same(a: &T, b: &T) -> bool {
    match (&a.n, &b.n) {
        (N::Var(x), N::Var(y)) => x == y,
        (N::Lit(x), N::Lit(y)) => x == y,
        (N::Lambda(p, x), N::Lambda(q, y)) => p == q && same(x, y),
        (N::Prim(p, x), N::Prim(q, y)) => p == q && x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (N::Op(p, x), N::Op(q, y)) => p == q && x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (N::If(x), N::If(y)) => x.iter().zip(y.iter()).all(|(a, b)| same(a, b)),
        (N::Let(k, v, x1, x2), N::Let(l, w, y1, y2)) => k == l && v == w && same(x1, y1) && same(x2, y2),
        (N::Pack(x), N::Pack(y)) => same(x, y),
        _ => false,
    }
}

/// A one-element array: a reduction, or a map over one.
fn one_element(e: &T) -> bool {
    match &e.n {
        N::Prim(Prim::Reduce(ir::ReduceKind::Plain), _) => true,
        N::Prim(Prim::Map(ir::MapKind::Plain), a) => one_element(&a[1]),
        _ => false,
    }
}

/// `at 0 R` with `R` one element: `R`.
fn at0_of(e: &T) -> Option<&T> {
    match &e.n {
        N::Op(Op::At, a) if matches!(a[0].n, N::Lit(Lit::Int(0))) && one_element(&a[1]) => Some(&a[1]),
        _ => None,
    }
}

/// The distinct `R` of `at 0 R` in `e` outside lambdas, reading none of `bound` (the variables
/// bound by `let`s on the way).
fn collect_at0(e: &T, bound: &mut BTreeSet<VarId>, found: &mut Vec<T>) {
    if let Some(r) = at0_of(e) {
        let mut fv = BTreeSet::new();
        free_vars(r, &mut vec![], &mut fv);
        if fv.is_disjoint(bound) {
            if !found.iter().any(|f| same(f, r)) {
                found.push(r.clone());
            }
            return;
        }
    }
    match &e.n {
        N::Lambda(..) | N::Var(_) | N::Lit(_) => {}
        N::Prim(_, a) | N::Op(_, a) => a.iter().for_each(|a| collect_at0(a, bound, found)),
        N::If(b) => b.iter().for_each(|a| collect_at0(a, bound, found)),
        N::Let(_, v, val, body) => {
            collect_at0(val, bound, found);
            bound.insert(*v);
            collect_at0(body, bound, found);
            bound.remove(v);
        }
        N::Pack(a) => collect_at0(a, bound, found),
    }
}

/// `e` with every `at 0 R` (outside lambdas) replaced by `by`.
fn replace_at0(e: T, r: &T, by: &T) -> T {
    if at0_of(&e).is_some_and(|x| same(x, r)) {
        return by.clone();
    }
    let span = e.span;
    let n = match e.n {
        N::Prim(p, a) => N::Prim(p, a.into_iter().map(|a| replace_at0(a, r, by)).collect()),
        N::Op(o, a) => N::Op(o, a.into_iter().map(|a| replace_at0(a, r, by)).collect()),
        N::If(b) => {
            let [c, p, q] = *b;
            N::If(Box::new([
                replace_at0(c, r, by),
                replace_at0(p, r, by),
                replace_at0(q, r, by),
            ]))
        }
        N::Let(k, v, val, body) => N::Let(
            k,
            v,
            Box::new(replace_at0(*val, r, by)),
            Box::new(replace_at0(*body, r, by)),
        ),
        N::Pack(a) => N::Pack(Box::new(replace_at0(*a, r, by))),
        n => n,
    };
    t(n, span)
}

/// The associative operator of a lambda `(λ(a b). op a b)` or `(λ(a b). op b a)`.
fn operator(f: &T) -> Option<Op> {
    let N::Lambda(ps, b) = &f.n else { return None };
    let N::Op(op @ (Op::Add | Op::Mul | Op::Min | Op::Max), args) = &b.n else {
        return None;
    };
    let vars: Vec<VarId> = args
        .iter()
        .filter_map(|a| match a.n {
            N::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    let both = ps.len() == 2 && vars.len() == 2 && vars[0] != vars[1] && vars.iter().all(|v| ps.contains(v));
    both.then_some(*op)
}

/// Whether `z` is the neutral element of `op` (any value for `min` and `max`, idempotent).
fn neutral(op: Op, z: &T) -> bool {
    let value = match &z.n {
        N::Lit(Lit::Float(x)) => f64::from(*x),
        N::Lit(Lit::Double(x)) => *x,
        N::Lit(Lit::Int(x)) => f64::from(*x),
        _ => return matches!(op, Op::Min | Op::Max),
    };
    match op {
        Op::Add => value == 0.0,
        Op::Mul => value == 1.0,
        _ => true,
    }
}

/// For `reduce f z (join (map (λc. reduce f' z' c) (split k xs)))` with `f` and `f'` one
/// associative operator, `z` and `z'` one neutral literal: `xs`; for an inner `reduce f' z'
/// (map g c)`: `map g xs`.
fn two_level(args: &[T]) -> Option<T> {
    let (f, z, x) = (&args[0], &args[1], &args[2]);
    let op = operator(f)?;
    if !neutral(op, z) {
        return None;
    }
    let N::Prim(Prim::Join, j) = &x.n else { return None };
    let N::Prim(Prim::Map(ir::MapKind::Plain), m) = &j[0].n else {
        return None;
    };
    let N::Prim(Prim::Split(_), s) = &m[1].n else {
        return None;
    };
    let N::Lambda(cs, body) = &m[0].n else { return None };
    let N::Prim(Prim::Reduce(ir::ReduceKind::Plain), inner) = &body.n else {
        return None;
    };
    if cs.len() != 1 || operator(&inner[0]) != Some(op) || !same_lit(&inner[1], z) {
        return None;
    }
    let is_chunk = |e: &T| matches!(e.n, N::Var(c) if c == cs[0]);
    if is_chunk(&inner[2]) {
        return Some(s[0].clone());
    }
    // each chunk mapped first (`reduce f z (map g c)`, a chunk's partial dot product): the
    // flat reduction of the mapped elements, `g` reading nothing of the chunk but its element
    let N::Prim(Prim::Map(ir::MapKind::Plain), gm) = &inner[2].n else {
        return None;
    };
    let mut fv = BTreeSet::new();
    free_vars(&gm[0], &mut vec![], &mut fv);
    (is_chunk(&gm[1]) && !fv.contains(&cs[0])).then(|| {
        let span = inner[2].span;
        t(
            N::Prim(Prim::Map(ir::MapKind::Plain), vec![gm[0].clone(), s[0].clone()]),
            span,
        )
    })
}

/// The powers computed by multiplication: `pow x 2`, `pow x 3` (exact for any sign of `x`) and
/// `pow x 1.5` (`x · sqrt x`: NaN for a negative `x` as `pow` is). A GPU's `pow` is a
/// logarithm and an exponential (n-body written with `pow r 1.5` ran 4.9× slower than with
/// `sqrt`: `bench/results/forms-more-nvidia-h200-2026-12-02.md`).
enum Power {
    Square,
    Cube,
    ThreeHalves,
}

fn power(e: &T) -> Option<Power> {
    let v = match e.n {
        N::Lit(Lit::Float(x)) => f64::from(x),
        N::Lit(Lit::Double(x)) => x,
        _ => return None,
    };
    if v == 2.0 {
        Some(Power::Square)
    } else if v == 3.0 {
        Some(Power::Cube)
    } else if v == 1.5 {
        Some(Power::ThreeHalves)
    } else {
        None
    }
}

fn same_lit(a: &T, b: &T) -> bool {
    matches!((&a.n, &b.n), (N::Lit(x), N::Lit(y)) if x == y)
}

/// Pushes `e` into `out`'s arena, children first (the arena's topological order).
fn emit(out: &mut Program, e: &T) -> ExprId {
    let node = match &e.n {
        N::Var(v) => Expr::Var(*v),
        N::Lit(l) => Expr::Lit(l.clone()),
        N::Lambda(ps, b) => Expr::Lambda {
            params: ps.clone(),
            body: emit(out, b),
        },
        N::Prim(p, a) => Expr::Prim {
            prim: p.clone(),
            args: a.iter().map(|a| emit(out, a)).collect(),
        },
        N::Op(o, a) => Expr::Op {
            op: *o,
            args: a.iter().map(|a| emit(out, a)).collect(),
        },
        N::If(b) => {
            let [c, x, y] = &**b;
            Expr::If {
                cond: emit(out, c),
                then: emit(out, x),
                els: emit(out, y),
            }
        }
        N::Let(k, v, val, body) => Expr::Let {
            kind: *k,
            var: *v,
            value: emit(out, val),
            body: emit(out, body),
        },
        N::Pack(a) => Expr::Pack(emit(out, a)),
    };
    out.push(node, e.span)
}
