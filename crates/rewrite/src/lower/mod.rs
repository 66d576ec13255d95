//! From an extracted high-level term to a low-level program, built directly in the IR's arena
//! (`build.rs`: opaque leaves are copies of the source program's nodes, with their spans), with
//! the OpenCL mapping decisions and the cost model's estimate.
//!
//! Mapping: at host level, each computed value is a kernel: an outer `map` becomes `mapGlb`, or
//! `mapWrg` with `mapLcl` inside when its function is a map over a chunk (`mapf`), or `mapGlb1`
//! with `mapGlb` inside when its function's body is itself a map; everything below is sequential
//! (`mapSeq`, `reduceSeq`, a reduction of a map fused into one `reduceSeq`). A host-level value
//! that a kernel reads is bound by `let`, so it is computed by an earlier kernel.
//!
//!
//! Each lowering returns the cost of what it emits (`cost` holds the model's constants and
//! formulas). The files of this module are one type's methods by the form they lower: `host`
//! dispatches, `tiled`, `rows`, `workgroup`, `colreduce`, `grid`, `rblock`, `reuse` and `stencil`
//! lower the forms of the rules of the same names; `loops` is the cost of loops inside a work-item.

mod colreduce;
mod grid;
mod host;
mod loops;
mod mma;
mod rblock;
mod reuse;
mod rows;
mod scan;
mod stencil;
mod tiled;
mod workgroup;

use crate::build::{Arg, Builder};
use crate::cost::*;
use crate::extract::{TOp, Term};
use crate::sizes::ttile_rows;
use egg::Symbol;
use ir::{AddressSpace, Expr, ExprId, MapKind, Op, Prim, ReduceKind, ScanKind, VarId};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use {colreduce::*, rblock::*, tiled::*, workgroup::*};

/// Heads of `Other` terms that only re-index their arguments (`Lowerer::computes`).
const LAYOUT: [&str; 7] = [
    "zip",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
];

pub struct Lowerer<'a> {
    pub text: &'a BTreeMap<Symbol, String>,
    /// The source node of each opaque leaf and `Other` head.
    pub origin: &'a BTreeMap<Symbol, ExprId>,
    pub b: Builder<'a>,
    pub taken: BTreeSet<String>,
    pub sizes: &'a BTreeMap<String, i64>,
    pub default_size: i64,
    pub lanes: f64,
    pub fresh: usize,
    pub notes: Vec<String>,
}

type Out = (ExprId, f64);

/// The rows a kernel reads one per work-item, the array beside them in a `zip` (if any), and
/// the rows' estimated length (`Lowerer::read_rows`).
type RowsRead<'t> = (&'t Rc<Term>, Option<&'t Rc<Term>>, f64);

/// An array argument of a kernel: its expression, and the earlier kernels' `let` bindings of
/// the arrays it is computed from (in scope until [`Lowerer::wrap`]).
type KernelArg = (ExprId, f64, Vec<(VarId, ExprId)>);

fn sym(name: &str) -> Rc<Term> {
    Term::new(TOp::Sym(Symbol::from(name)), vec![], None, None)
}

/// `join (split k x)` = `x`, applied everywhere (extraction may keep such pairs).
pub fn simplify(t: &Rc<Term>) -> Rc<Term> {
    let kids: Vec<Rc<Term>> = t.kids.iter().map(simplify).collect();
    if t.op == TOp::Join {
        if let Some(TOp::Split(_)) = kids.first().map(|k| &k.op) {
            return kids[0].kids[1].clone();
        }
    }
    Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
}

/// `λr. map g ys`, `λr. join (map g ys)` or `λr. join (join (map g ys))`: the inner map and how
/// many times it is joined. Twice is a row of reductions in chunks (`join (join (map (mapf (λw.
/// reduce …)) (split k ws)))`, a convolution's row a chunk of outputs a work-item).
fn two_d(f: &Rc<Term>) -> Option<(Rc<Term>, usize)> {
    if f.op != TOp::Lam {
        return None;
    }
    let mut b = &f.kids[1];
    let mut joins = 0;
    while b.op == TOp::Join && joins < 2 {
        b = &b.kids[0];
        joins += 1;
    }
    (b.op == TOp::Map).then(|| (b.clone(), joins))
}

/// A leaf function or a composition of leaves, in the order they apply (innermost first).
fn leaf_chain(f: &Term) -> Option<Vec<Symbol>> {
    match &f.op {
        TOp::Sym(g) => Some(vec![*g]),
        TOp::Comp => {
            let mut inner = leaf_chain(&f.kids[1])?;
            inner.extend(leaf_chain(&f.kids[0])?);
            Some(inner)
        }
        _ => None,
    }
}

fn is_fun(t: &Term) -> bool {
    matches!(t.op, TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp)
}

impl Lowerer<'_> {
    fn name(&mut self, base: &str) -> String {
        loop {
            let n = format!("{base}{}", self.fresh);
            self.fresh += 1;
            if !self.taken.contains(&n) {
                return n;
            }
        }
    }

    fn len(&self, t: &Term) -> f64 {
        self.eval(t.len.as_ref())
    }

    /// Rounds of `gc` of a one-dimensional kernel-level `mapGlb` over `x` of `n` elements: code
    /// generation gives each work-item `GLB_COARSEN` of them (a launch apart) where the length
    /// is not a constant, so only `n / 8` work-items share the GPU's lanes and each runs 8
    /// bodies one after another. For md (73728 pairs, 9216 work-items) and n-body (131072 bodies)
    /// the H200 ran the `mapGlb` variants 3.7 to 6.7× slower than `mapWrg`×`mapLcl` ones of one
    /// element per work-item, which a wave count of `n / lanes` ranked equal.
    fn glb_waves(&self, x: &Term, n: f64) -> f64 {
        let coarsened = x.len.as_ref().is_none_or(|l| l.as_cst().is_none());
        if coarsened {
            (n / (GLB_COARSEN * self.lanes)).ceil() * GLB_COARSEN
        } else {
            (n / self.lanes).ceil()
        }
    }

    /// Elements each work-item running `f` writes: the length of its body's result, one for a
    /// scalar (`mapf g` is one work-item per element, as `g`).
    fn item_writes(&self, f: &Term) -> f64 {
        match f.op {
            TOp::MapF => self.item_writes(&f.kids[0]),
            // `comp a b` returns what `a` does
            TOp::Comp => self.item_writes(&f.kids[0]),
            TOp::Lam => {
                let body = &f.kids[1];
                match (&body.len, &body.inner) {
                    (None, _) => 1.0,
                    (Some(n), None) => self.eval(Some(n)).max(1.0),
                    (Some(n), Some(m)) => self.eval(Some(n)).max(1.0) * self.eval(Some(m)).max(1.0),
                }
            }
            _ => 1.0,
        }
    }

    /// The writes beyond one element per work-item of `threads` work-items running `f`, at the
    /// cost `MEM` of the one (`threads * MEM`): a kernel whose work-items each compute a whole
    /// row writes as much as one of a work-item per element, and a model charging only a
    /// work-item's element ranks the row-per-work-item mappings of a 67M-pixel convolution
    /// (8192 work-items, each a row of 8192 pixels) above its `mapGlb1 × mapGlb` (one per
    /// pixel, the tuned best on the H200).
    fn extra_writes(&self, f: &Term, threads: f64) -> f64 {
        (self.item_writes(f) - 1.0) * threads * MEM
    }

    /// The writes of `threads` work-items that each map `g` over a chunk of `y` (`mapf h` over
    /// `split c ys`): neighbouring work-items write `c` elements apart, so from `c` of
    /// `COALESCED_ELEMS` on every element of a warp's store is a segment of its own. Only this
    /// charge separates the chunked `mapGlb1 × mapGlb` variants of a stencil from each other:
    /// counted as coalesced (`extra_writes`), a work-item's writes ranked chunks of 128
    /// outputs (2.26 ms on the H200 for jacobi at 8192²) above chunks of 4 (0.193 ms, the
    /// tuned best, ranked 4th).
    ///
    /// A chunk of outputs that are each a reduction (a convolution's taps) pays more: its loop
    /// runs once per output, and each of its loads by a warp spans `c` times the bytes of a
    /// coalesced one, so every read of the reduction costs `c - 1` more turns of the cache
    /// (`MEM` each). On the H200 convolution rows in chunks of 4 took 0.659 ms against 0.4255
    /// for one output a work-item; jacobi's outputs, no reduction, 0.193 against 0.252.
    fn chunk_strided(&self, g: &Term, y: &Term, threads: f64) -> f64 {
        let c = self.eval(y.inner.as_ref());
        if g.op != TOp::MapF || y.inner.is_none() {
            return 0.0;
        }
        let writes = if c >= COALESCED_ELEMS {
            threads * c * STRIDED
        } else {
            0.0
        };
        let reads = self.reduced_len(g).map_or(0.0, |n| threads * c * n * (c - 1.0) * MEM);
        writes + reads
    }

    /// The length of the first reduction in `t` (the loads of its loop), if any.
    fn reduced_len(&self, t: &Term) -> Option<f64> {
        match t.op {
            TOp::Reduce | TOp::ReduceU => Some(self.len(&t.kids[2])),
            _ => t.kids.iter().find_map(|k| self.reduced_len(k)),
        }
    }

    fn eval(&self, e: Option<&arith::ArithExpr>) -> f64 {
        let d = self.default_size;
        e.and_then(|e| crate::sizes::estimate(e, self.sizes, d)).unwrap_or(d) as f64
    }

    fn leaf_text(&self, s: &Symbol) -> String {
        self.text.get(s).cloned().unwrap_or_else(|| s.to_string())
    }

    /// A leaf: a copy of its source subtree, or a variable in scope.
    fn leaf(&mut self, s: &Symbol) -> ExprId {
        match self.origin.get(s) {
            Some(id) => self.b.copy(*id),
            None => self.b.name(s.as_str()),
        }
    }

    fn leaf_cost(&self, s: &Symbol) -> f64 {
        let written = self
            .text
            .get(s)
            .map_or(0.0, |t| t.matches('(').count().saturating_sub(1) as f64)
            .max(1.0);
        written + self.hidden_steps(s)
    }

    /// The source lambda of a function leaf `f`, applied to `args`.
    fn call(&mut self, f: &Symbol, args: &[Arg]) -> ExprId {
        match self.origin.get(f) {
            Some(id) => self.b.apply(*id, args),
            None => {
                self.b
                    .broken
                    .get_or_insert_with(|| format!("`{f}` is applied but is not a function"));
                self.b.int(0)
            }
        }
    }

    /// A term as an argument of an applied function: variables are substituted.
    fn arg(&mut self, t: &Rc<Term>) -> (Arg, f64) {
        if let TOp::Sym(s) = &t.op {
            if !self.origin.contains_key(s) {
                return (Arg::Var(self.b.lookup(s.as_str())), 0.0);
            }
        }
        let (e, c) = self.seq(t);
        (Arg::Expr(e), c)
    }

    /// Whether evaluating `t` runs any computation (as opposed to only rearranging arrays).
    fn computes(&self, t: &Term) -> bool {
        match &t.op {
            TOp::Map if self.reindexes(&t.kids[0]) => self.computes(&t.kids[1]),
            // a definition's argument bound to a view (`pad2d`'s rows) is that view
            TOp::Let => self.computes(&t.kids[1]) || self.computes(&t.kids[2]),
            // a reduction in one launch computes even over a parameter (`let r (gridreduce … xs)`)
            TOp::Map | TOp::Reduce | TOp::App | TOp::TTile(_) | TOp::ColReduce(..) | TOp::RBlock(_) => true,
            TOp::Stencil(_) => true,
            TOp::GridReduce(..) | TOp::WgReduce(_) => true,
            TOp::Scan | TOp::ScanGlb | TOp::ScanRows | TOp::MapScan => true,
            TOp::Other(s) => {
                let head = s.as_str().split(['|', ' ']).next().unwrap_or("");
                !LAYOUT.contains(&head) || t.kids.iter().any(|k| self.computes(k))
            }
            _ => t.kids.iter().any(|k| self.computes(k)),
        }
    }

    /// Whether `f` only re-indexes its argument (join, split, transpose, slide, pad-clamp, pad
    /// by a literal, and maps of those): code generation reads a plain `map f x` as a view of
    /// `x` (`codegen_opencl`'s `layout_map`), so a kernel reading it needs no kernel before it
    /// to store it (`slide2d`'s windows of every row).
    fn reindexes(&self, f: &Term) -> bool {
        match &f.op {
            TOp::Lam => match &f.kids[0].op {
                TOp::Sym(x) => self.reindex_chain(&f.kids[1], x),
                _ => false,
            },
            TOp::MapF => self.reindexes(&f.kids[0]),
            _ => false,
        }
    }

    /// `t` is the variable `x` under re-indexings only (see [`Lowerer::reindexes`]).
    fn reindex_chain(&self, t: &Term, x: &Symbol) -> bool {
        match &t.op {
            TOp::Sym(s) => s == x,
            TOp::Split(_) => self.reindex_chain(&t.kids[1], x),
            TOp::Join | TOp::Transpose => self.reindex_chain(&t.kids[0], x),
            TOp::Map => self.reindexes(&t.kids[0]) && self.reindex_chain(&t.kids[1], x),
            TOp::Other(s) => {
                let head = s.as_str().split(['|', ' ']).next().unwrap_or("");
                match (head, t.kids.as_slice()) {
                    ("transpose" | "slide" | "pad-clamp", [a]) => self.reindex_chain(a, x),
                    // a literal fill is the same in every row
                    ("pad", [fill, a]) => {
                        let literal = match &fill.op {
                            TOp::Sym(v) => self
                                .origin
                                .get(v)
                                .is_some_and(|id| matches!(self.b.src.expr(*id), Expr::Lit(_))),
                            _ => false,
                        };
                        literal && self.reindex_chain(a, x)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// `f a` as a term.
    fn apply(&mut self, f: &Rc<Term>, a: Rc<Term>) -> Rc<Term> {
        let k = &f.kids;
        match f.op {
            TOp::Lam => Term::new(TOp::Let, vec![k[0].clone(), a, k[1].clone()], k[1].len.clone(), None),
            TOp::MapF => {
                let len = a.len.clone();
                Term::new(TOp::Map, vec![k[0].clone(), a], len, None)
            }
            TOp::ReduceF | TOp::ReduceFU => Term::new(
                if f.op == TOp::ReduceF {
                    TOp::Reduce
                } else {
                    TOp::ReduceU
                },
                vec![k[0].clone(), k[1].clone(), a],
                Some(arith::ArithExpr::cst(1)),
                None,
            ),
            TOp::Comp => {
                let inner = self.apply(&k[1], a);
                self.apply(&k[0], inner)
            }
            _ => Term::new(TOp::App, vec![f.clone(), a], None, None),
        }
    }

    fn sym_name(t: &Term) -> String {
        t.sexp()
    }

    /// A function as a lambda for sequential code, and its cost per application on an argument
    /// of outer length `arg_len`.
    fn func(&mut self, f: &Rc<Term>, arg_len: f64) -> Out {
        match &f.op {
            TOp::Sym(s) => (self.leaf(s), self.leaf_cost(s)),
            TOp::Lam => {
                let p = self.b.bind(&Self::sym_name(&f.kids[0]));
                let (b, c) = self.seq(&f.kids[1]);
                self.b.unbind(p);
                (self.b.lambda(vec![p], b), c)
            }
            _ => {
                let v = self.name("v");
                let mut arg = sym(&v);
                if let Some(a) = Rc::get_mut(&mut arg) {
                    a.len = Some(arith::ArithExpr::cst(arg_len as i64));
                }
                let body = self.apply(f, arg);
                let p = self.b.bind(&v);
                let (b, c) = self.seq(&body);
                self.b.unbind(p);
                (self.b.lambda(vec![p], b), c)
            }
        }
    }

    /// The arguments of an `Other` node: functions as lambdas, arrays as host or sequential code.
    /// The functions of a loop inside a work-item (`loop_steps`) cost once per step.
    fn kids(&mut self, t: &Term, host: bool) -> (Vec<ExprId>, f64) {
        let mut out = vec![];
        let mut cost = 0.0;
        let steps = self.loop_steps(t);
        for k in &t.kids {
            let (kt, kc) = if is_fun(k) {
                let (f, fc) = self.func(k, self.eval(t.inner.as_ref()));
                (f, steps * fc)
            } else if let (TOp::Sym(f), true) = (&k.op, steps > 1.0 && self.is_lambda_leaf(k)) {
                // a loop's function without array primitives is an opaque leaf
                (self.leaf(f), steps * self.leaf_cost(f))
            } else if host {
                self.host(k)
            } else {
                self.seq(k)
            };
            out.push(kt);
            cost += kc;
        }
        (out, cost)
    }

    /// Whether `t` is an opaque leaf holding a function.
    fn is_lambda_leaf(&self, t: &Term) -> bool {
        let TOp::Sym(s) = &t.op else { return false };
        self.origin
            .get(s)
            .is_some_and(|id| matches!(self.b.src.expr(*id), Expr::Lambda { .. }))
    }

    /// Code run by one work-item.
    pub fn seq(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        match &t.op {
            // a view of its argument in any work-item: nothing is copied
            TOp::Map if self.reindexes(&k[0]) => {
                let (f, _) = self.func(&k[0], self.eval(k[1].inner.as_ref()));
                let (x, xc) = self.seq(&k[1]);
                (self.b.prim(Prim::Map(MapKind::Plain), vec![f, x]), xc)
            }
            TOp::Map => {
                let n = self.len(&k[1]);
                let (f, fc) = self.func(&k[0], self.eval(k[1].inner.as_ref()));
                let (x, xc) = self.seq(&k[1]);
                (self.b.prim(Prim::Map(MapKind::Seq), vec![f, x]), xc + n * (fc + 1.0))
            }
            TOp::Reduce if self.folds_pieces(t) => self.seq_fold_join(t),
            TOp::Reduce | TOp::ReduceU => {
                // reduce f z (map g ys) with leaf functions = reduceSeq (λ acc y. f acc (g y)) z ys;
                // `g` may be a composition of leaves (`map (g1 ∘ g2)`: a gather, then the
                // function of the gathered element), applied innermost first
                let fused = match (&k[0].op, &k[2].op) {
                    (TOp::Sym(f), TOp::Map) => leaf_chain(&k[2].kids[0]).map(|g| (*f, g)),
                    _ => None,
                };
                // a fused function is applied inside the new lambda, not passed itself
                let (f, fc) = match fused {
                    Some((f, _)) => (None, self.leaf_cost(&f)),
                    None => {
                        let (f, fc) = self.func(&k[0], 1.0);
                        (Some(f), fc)
                    }
                };
                let (z, _) = self.seq(&k[1]);
                let (kind, step) = if t.op == TOp::ReduceU {
                    self.notes.push("reduceSeqUnroll".into());
                    // no loop counter or branch per element
                    (ReduceKind::SeqUnroll, 0.5)
                } else {
                    (ReduceKind::Seq, 1.0)
                };
                let (fs, gs) = match (f, fused) {
                    (Some(f), _) => {
                        let n = self.len(&k[2]);
                        let (x, xc) = self.seq(&k[2]);
                        return (self.b.prim(Prim::Reduce(kind), vec![f, z, x]), xc + n * (fc + step));
                    }
                    (None, Some(fg)) => fg,
                    (None, None) => unreachable!("the function is built unless the reduction is fused"),
                };
                let gc: f64 = gs.iter().map(|g| self.leaf_cost(g)).sum();
                let ys = &k[2].kids[1];
                let n = self.len(ys);
                let (y, yc) = self.seq(ys);
                let (a, b) = (self.name("acc"), self.name("y"));
                self.notes.push("reduce∘map fused".into());
                let (av, bv) = (self.b.bind(&a), self.b.bind(&b));
                let mut gy = self.call(&gs[0], &[Arg::Var(bv)]);
                for g in &gs[1..] {
                    gy = self.call(g, &[Arg::Expr(gy)]);
                }
                let body = self.call(&fs, &[Arg::Var(av), Arg::Expr(gy)]);
                self.b.unbind(bv);
                self.b.unbind(av);
                let lam = self.b.lambda(vec![av, bv], body);
                (
                    self.b.prim(Prim::Reduce(kind), vec![lam, z, y]),
                    yc + n * (fc + gc + step),
                )
            }
            TOp::App => {
                let (a, ac) = self.arg(&k[1]);
                let (e, fc) = match &k[0].op {
                    TOp::Sym(s) => (self.call(s, &[a]), self.leaf_cost(s)),
                    _ => {
                        self.b
                            .broken
                            .get_or_insert_with(|| "an application of a non-leaf function".into());
                        (self.b.int(0), 0.0)
                    }
                };
                (e, fc + ac)
            }
            TOp::Let => {
                let (v, vc) = self.seq(&k[1]);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.seq(&k[2]);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            TOp::TTile(_) => {
                // inside a work-item there are no work-groups: the plain transposed copy
                let (f, m) = (&k[1], &k[2]);
                let tr = Term::new(TOp::Transpose, vec![m.clone()], m.inner.clone(), m.len.clone());
                let mf = Term::new(TOp::MapF, vec![f.clone()], None, None);
                let map = Term::new(TOp::Map, vec![mf, tr], t.len.clone(), t.inner.clone());
                self.seq(&map)
            }
            // inside a work-item there are no work-groups: the plain product
            TOp::RBlock(c) if c & crate::sizes::RBLOCK_ROWS != 0 => self.seq(&rblock_rows_as_map(t)),
            TOp::RBlock(_) => self.seq(&rblock_as_map(t)),
            // inside a work-item there are no work-groups: the map over the windows
            TOp::Stencil(c) => self.seq_stencil(t, *c),
            TOp::Scan | TOp::ScanGlb | TOp::ScanRows | TOp::MapScan => self.seq_scan(t),
            // an element's scalar code, counted once, but for the further steps of its loops
            TOp::Sym(s) => (self.leaf(s), self.hidden_steps(s)),
            TOp::Num(n) => (self.b.int(*n), 0.0),
            TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => self.func(t, 1.0),
            // outside a work-group's own body, one work-item does the reduction
            TOp::WgReduce(_) => self.seq(&as_reduce(t)),
            TOp::GridReduce(..) => self.seq(&Term::new(TOp::Reduce, t.kids[2..].to_vec(), t.len.clone(), None)),
            // inside a work-item there are no work-groups: the map it equals
            TOp::ColReduce(..) => self.seq(&as_map(t)),
            // a K-tiling annotation: inside a work-item, the product it marks (seq and layout
            // would otherwise hand it to each other forever)
            TOp::KTile(_) => self.seq(&t.kids[1]),
            // join (map (mapf f) (split k x)) = map f x: for a re-indexing `f` both are one
            // view, so that the variants differing only in `k` lower to one program
            TOp::Join if k[0].op == TOp::Map && k[0].kids[0].op == TOp::MapF && self.reindexes(&k[0].kids[0]) => {
                match &k[0].kids[1].op {
                    TOp::Split(_) => {
                        let y = &k[0].kids[1].kids[1];
                        let m = Term::new(
                            TOp::Map,
                            vec![k[0].kids[0].kids[0].clone(), y.clone()],
                            t.len.clone(),
                            t.inner.clone(),
                        );
                        self.seq(&m)
                    }
                    _ => self.layout(t, false),
                }
            }
            _ => self.layout(t, false),
        }
    }

    /// The primitive of an `Other` head, with its size arguments, from the source node.
    fn head(&mut self, s: &Symbol) -> Option<(Prim, ir::Span)> {
        let id = *self.origin.get(s)?;
        match self.b.src.expr(id) {
            Expr::Prim { prim, .. } => Some((prim.clone(), self.b.src.span(id))),
            _ => None,
        }
    }

    fn layout(&mut self, t: &Rc<Term>, host: bool) -> Out {
        let k = &t.kids;
        let one = |me: &mut Self, x: &Rc<Term>| if host { me.host(x) } else { me.seq(x) };
        match &t.op {
            TOp::Split(n) => {
                let (x, c) = one(self, &k[1]);
                (self.b.prim(Prim::Split(arith::ArithExpr::cst(*n)), vec![x]), c)
            }
            TOp::AsVector(w) => {
                let (x, c) = one(self, &k[1]);
                (self.b.prim(Prim::AsVector(*w as u8), vec![x]), c)
            }
            TOp::Join => {
                let (x, c) = one(self, &k[0]);
                (self.b.prim(Prim::Join, vec![x]), c)
            }
            TOp::AsScalar => {
                let (x, c) = one(self, &k[0]);
                (self.b.prim(Prim::AsScalar, vec![x]), c)
            }
            TOp::Transpose => {
                let (x, c) = one(self, &k[0]);
                (self.b.prim(Prim::Transpose, vec![x]), c)
            }
            // Staging only means something where a work-group copies the tile (`host_tiled`).
            TOp::Local => one(self, &k[0]),
            // only a kernel's `mapWrg` over the chunks stages them (`host_staged_rows`)
            TOp::Stage => one(self, &k[0]),
            TOp::StageVec => one(self, &k[0]),
            // only a `mapWrg` over chunks reads in tiles (`host_reuse`)
            TOp::Tiles(..) => one(self, &k[2]),
            TOp::Other(s) => {
                let (kt, kc) = self.kids(t, host);
                match self.head(s) {
                    Some((prim, span)) => (self.b.prim_at(prim, kt, span), kc),
                    None => {
                        self.b.broken.get_or_insert_with(|| format!("no primitive for `{s}`"));
                        (self.b.int(0), kc)
                    }
                }
            }
            _ => one(self, t),
        }
    }

    /// An array argument of a kernel: a `let`-bound earlier kernel when it computes.
    fn kernel_arg(&mut self, x: &Rc<Term>) -> KernelArg {
        if !self.computes(x) {
            let (v, c) = self.seq(x);
            return (v, c, vec![]);
        }
        // a view of computed arrays (`slide (pad-clamp rows)`, `zip xs ys`): the arrays are the
        // earlier kernels' and the view is read where the kernel reads it; binding the view
        // itself would store it, one work-item copying every element
        if self.read_only_view(x) {
            let mut binds = vec![];
            let (view, cost) = self.view_of_kernels(x, &mut binds, true);
            let (v, c) = self.seq(&view);
            return (v, cost + c, binds);
        }
        let (_, c, bind) = self.bind_kernel(x, true);
        (self.b.var(bind.0), c, vec![bind])
    }

    /// `x` with each computed array below its views bound by a kernel of its own (`binds`), as
    /// the variable of that binding; and the kernels' cost. `note`: the kernels are an
    /// intermediate of the kernel being lowered (not a `let`'s own value).
    pub(super) fn view_of_kernels(
        &mut self,
        x: &Rc<Term>,
        binds: &mut Vec<(VarId, ExprId)>,
        note: bool,
    ) -> (Rc<Term>, f64) {
        if !self.computes(x) {
            return (x.clone(), 0.0);
        }
        if !self.read_only_view(x) {
            let (p, c, bind) = self.bind_kernel(x, note);
            binds.push(bind);
            let var = Term::new(
                TOp::Sym(Symbol::from(p.as_str())),
                vec![],
                x.len.clone(),
                x.inner.clone(),
            );
            return (var, c);
        }
        let mut cost = 0.0;
        let mut kids = vec![];
        for (i, k) in x.kids.iter().enumerate() {
            // a map's function re-indexes, it is no array
            if i == 0 && x.op == TOp::Map {
                kids.push(k.clone());
                continue;
            }
            let (k, c) = self.view_of_kernels(k, binds, note);
            cost += c;
            kids.push(k);
        }
        (Term::new(x.op.clone(), kids, x.len.clone(), x.inner.clone()), cost)
    }

    /// As `kernel_arg`, a view of computed arrays bound whole (a kernel argument read again
    /// by a second kernel as the same variable).
    fn kernel_arg_whole(&mut self, x: &Rc<Term>) -> KernelArg {
        if !self.computes(x) {
            let (v, c) = self.seq(x);
            return (v, c, vec![]);
        }
        let (_, c, bind) = self.bind_kernel(x, true);
        (self.b.var(bind.0), c, vec![bind])
    }

    /// The kernels computing `x`, bound to a fresh name (returned, with their cost and binding).
    fn bind_kernel(&mut self, x: &Rc<Term>, note: bool) -> (String, f64, (VarId, ExprId)) {
        let (v, c) = self.host(x);
        let p = self.name("tmp");
        if note {
            self.notes.push("separate kernel for an intermediate".into());
        }
        let var = self.b.bind(&p);
        (p, c, (var, v))
    }

    /// Whether `t` is a view that a kernel cannot write its result through (a `zip`, `slide`,
    /// `pad`, `pad-clamp`), or a view of one: binding it whole would store it element by
    /// element. A kernel's result written through a split, join or transpose is bound whole
    /// (writing transposed is what a second pass reading it many times wants).
    fn read_only_view(&self, t: &Term) -> bool {
        let through = match &t.op {
            TOp::Split(_) | TOp::Join | TOp::Transpose | TOp::AsVector(_) | TOp::AsScalar => true,
            TOp::Map => self.reindexes(&t.kids[0]),
            TOp::Other(s) => {
                let head = s.as_str().split(['|', ' ']).next().unwrap_or("");
                if matches!(head, "zip" | "slide" | "pad" | "pad-clamp") {
                    return true;
                }
                LAYOUT.contains(&head)
            }
            _ => false,
        };
        through && t.kids.iter().any(|k| self.read_only_view(k))
    }

    fn wrap(&mut self, binds: Vec<(VarId, ExprId)>, body: ExprId) -> ExprId {
        binds.into_iter().rev().fold(body, |body, (p, v)| {
            self.b.unbind(p);
            self.b.let_(p, v, body)
        })
    }

    fn is_transpose(&self, t: &Term) -> bool {
        match &t.op {
            TOp::Transpose => true,
            TOp::Other(s) => self.leaf_text(s) == "transpose",
            _ => false,
        }
    }

    /// `mapLcl1 (λv. mapLcl0 (λx. x) v) e`: a copy of a 2-D tile by the work-group.
    fn tile_copy(&mut self, e: ExprId) -> ExprId {
        let v = self.b.bind("v");
        let x = self.b.bind("x");
        let xe = self.b.var(x);
        let id = self.b.lambda(vec![x], xe);
        self.b.unbind(x);
        let ve = self.b.var(v);
        let inner = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, ve]);
        self.b.unbind(v);
        let f = self.b.lambda(vec![v], inner);
        self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![f, e])
    }

    fn get(&mut self, i: u8, v: VarId) -> ExprId {
        let e = self.b.var(v);
        self.b.op(Op::Get(i), vec![e])
    }

    /// `map (split #k) x`, the function eta-expanded as the reader does.
    fn map_split(&mut self, k: i64, x: ExprId) -> ExprId {
        let p = self.b.bind("p");
        let pe = self.b.var(p);
        let body = self.b.prim(Prim::Split(arith::ArithExpr::cst(k)), vec![pe]);
        self.b.unbind(p);
        let f = self.b.lambda(vec![p], body);
        self.b.prim(Prim::Map(MapKind::Plain), vec![f, x])
    }
}
