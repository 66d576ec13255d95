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
//! Cost (arbitrary units, about one per scalar operation): a launch costs `LAUNCH`; a parallel
//! loop of `n` work-items over a body of cost `b` costs `ceil(n / lanes) * b` plus memory
//! traffic `n * MEM`; a sequential loop costs `n * (b + 1)`. A kernel over the rows of a transpose
//! whose rows are arrays reads or writes every element with a stride: `STRIDED` per element more.

use crate::build::{Arg, Builder};
use crate::extract::{TOp, Term};
use egg::Symbol;
use ir::{AddressSpace, Expr, ExprId, MapKind, Op, Prim, ReduceKind, VarId};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

const LAUNCH: f64 = 2000.0;
const MEM: f64 = 0.05;
/// Extra cost of an element read or written with a stride of a row in global memory: a GPU
/// moves whole segments (32 bytes) for each 4-byte element, about 8× the coalesced traffic.
const STRIDED: f64 = 7.0 * MEM;
/// Elements of 4 bytes in the 32-byte segment a GPU moves for one access.
const COALESCED_ELEMS: f64 = 8.0;
/// Cost of reading one element of a row a row apart from the neighbouring work-item's
/// (`Lowerer::row_reads`), and of copying one element into local memory with consecutive
/// work-items at consecutive addresses (`Lowerer::host_staged_rows`).
const ROW_STRIDED: f64 = 2.0;
const STAGED_COPY: f64 = 0.5;
/// Indices per work-item of a kernel's outermost one-dimensional `mapGlb` over a run-time
/// length (`codegen_opencl`'s `GLB_COARSEN`).
const GLB_COARSEN: f64 = 8.0;
/// Elements per vector of a `stage-rows-vec` copy.
const VEC_COPY: i64 = 4;
/// Extra cost of one more turn of local memory for a read that `w` work-items of a warp make
/// in one bank (`row_bank_ways`).
const LOCAL_READ: f64 = 0.25;
/// Banks of local memory (of 4-byte words) that one access of a warp is served by at once.
const LOCAL_BANKS: i64 = 32;

/// How many work-items of a warp read one bank at once when each reads its own unpadded row of
/// `row_len` words in local memory, at the same position: `gcd(row_len, 32)` (1 for an odd
/// length, 2 for k-means' 34 features). A length not known at compile time counts 1.
fn row_bank_ways(row_len: &arith::ArithExpr, sizes: &BTreeMap<String, i64>) -> f64 {
    let Some(l) = crate::egraph::estimate(row_len, sizes, 0).filter(|&l| l > 0) else {
        return 1.0;
    };
    let (mut a, mut b) = (l, LOCAL_BANKS);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as f64
}

/// Most rows of work-items of a transpose tile's work-group (`egraph::TransposeTile`): each
/// work-item moves `t / ttile_rows(t)` elements of a `t × t` tile.
const TTILE_ROWS: i64 = 8;

/// Rows of work-items of the work-group of a `t × t` transpose tile.
pub fn ttile_rows(t: i64) -> i64 {
    t.min(TTILE_ROWS)
}
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

/// An array argument of a kernel: its expression, and the earlier kernel's `let` binding when it
/// is computed (in scope until [`Lowerer::wrap`]).
type KernelArg = (ExprId, f64, Option<(VarId, ExprId)>);

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

/// The parts of a 2-D work-group tiling (see `egraph::Tile2d`).
struct Tiled {
    xs: Rc<Term>,
    ys: Rc<Term>,
    t1: i64,
    t0: i64,
    big_r: String,
    big_c: String,
    z: String,
    r: String,
    g: Rc<Term>,
    joined: bool,
    stage_r: bool,
    stage_c: bool,
    /// Accumulate the block over tiles of this length along the dot products.
    ktile: Option<i64>,
}

/// `join (map (λR. map (λz. join z) (transpose (map (λC. map (λr. join? (map g C')) R')
/// (split t0 ys)))) (split t1 xs))` with `R'`, `C'` the tiles or their staged copies.
fn tiled(t: &Rc<Term>) -> Option<Tiled> {
    let sym = |t: &Rc<Term>| match &t.op {
        TOp::Sym(s) => Some(s.to_string()),
        _ => None,
    };
    let staged = |t: &Rc<Term>, name: &str| match t.op {
        TOp::Local => (sym(&t.kids[0]).as_deref() == Some(name)).then_some(true),
        _ => (sym(t).as_deref() == Some(name)).then_some(false),
    };
    let split = |t: &Rc<Term>| match t.op {
        TOp::Split(k) => Some((k, t.kids[1].clone())),
        _ => None,
    };
    if t.op != TOp::Join || t.kids[0].op != TOp::Map {
        return None;
    }
    let (outer_fn, xsplit) = (&t.kids[0].kids[0], &t.kids[0].kids[1]);
    let (t1, xs) = split(xsplit)?;
    if outer_fn.op != TOp::Lam {
        return None;
    }
    let big_r = sym(&outer_fn.kids[0])?;
    let rows = &outer_fn.kids[1];
    if rows.op != TOp::Map || rows.kids[0].op != TOp::Lam || rows.kids[1].op != TOp::Transpose {
        return None;
    }
    let join_fn = &rows.kids[0];
    let z = sym(&join_fn.kids[0])?;
    if join_fn.kids[1].op != TOp::Join || sym(&join_fn.kids[1].kids[0]).as_deref() != Some(z.as_str()) {
        return None;
    }
    let blocks = &rows.kids[1].kids[0];
    if blocks.op != TOp::Map || blocks.kids[0].op != TOp::Lam {
        return None;
    }
    let (t0, ys) = split(&blocks.kids[1])?;
    let block_fn = &blocks.kids[0];
    let big_c = sym(&block_fn.kids[0])?;
    let (block, ktile) = match block_fn.kids[1].op {
        TOp::KTile(k) => (&block_fn.kids[1].kids[1], Some(k)),
        _ => (&block_fn.kids[1], None),
    };
    if block.op != TOp::Map || block.kids[0].op != TOp::Lam {
        return None;
    }
    let stage_r = staged(&block.kids[1], &big_r)?;
    let row_fn = &block.kids[0];
    let r = sym(&row_fn.kids[0])?;
    let (row_map, joined) = match row_fn.kids[1].op {
        TOp::Join => (row_fn.kids[1].kids[0].clone(), true),
        _ => (row_fn.kids[1].clone(), false),
    };
    if row_map.op != TOp::Map {
        return None;
    }
    let stage_c = staged(&row_map.kids[1], &big_c)?;
    Some(Tiled {
        xs,
        ys,
        t1,
        t0,
        big_r,
        big_c,
        z,
        r,
        g: row_map.kids[0].clone(),
        joined,
        stage_r,
        stage_c,
        ktile,
    })
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
        e.and_then(|e| crate::egraph::estimate(e, self.sizes, d)).unwrap_or(d) as f64
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
        self.text
            .get(s)
            .map_or(0.0, |t| t.matches('(').count().saturating_sub(1) as f64)
            .max(1.0)
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
            TOp::Map | TOp::Reduce | TOp::App | TOp::TTile(_) | TOp::ColReduce(..) | TOp::RBlock(_) => true,
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
    fn kids(&mut self, t: &Term, host: bool) -> (Vec<ExprId>, f64) {
        let mut out = vec![];
        let mut cost = 0.0;
        for k in &t.kids {
            let (kt, kc) = if is_fun(k) {
                self.func(k, self.eval(t.inner.as_ref()))
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
                // reduce f z (map g ys) with leaf functions = reduceSeq (λ acc y. f acc (g y)) z ys
                let fused = match (&k[0].op, &k[2].op) {
                    (TOp::Sym(f), TOp::Map) => match &k[2].kids[0].op {
                        TOp::Sym(g) => Some((*f, *g)),
                        _ => None,
                    },
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
                let gc = self.leaf_cost(&gs);
                let ys = &k[2].kids[1];
                let n = self.len(ys);
                let (y, yc) = self.seq(ys);
                let (a, b) = (self.name("acc"), self.name("y"));
                self.notes.push("reduce∘map fused".into());
                let (av, bv) = (self.b.bind(&a), self.b.bind(&b));
                let gy = self.call(&gs, &[Arg::Var(bv)]);
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
            TOp::RBlock(c) if c & crate::egraph::RBLOCK_ROWS != 0 => self.seq(&rblock_rows_as_map(t)),
            TOp::RBlock(_) => self.seq(&rblock_as_map(t)),
            TOp::Sym(s) => (self.leaf(s), 0.0),
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
        if self.computes(x) {
            let (v, c) = self.host(x);
            let p = self.name("tmp");
            self.notes.push("separate kernel for an intermediate".into());
            let var = self.b.bind(&p);
            (self.b.var(var), c, Some((var, v)))
        } else {
            let (v, c) = self.seq(x);
            (v, c, None)
        }
    }

    fn wrap(&mut self, bind: Option<(VarId, ExprId)>, body: ExprId) -> ExprId {
        match bind {
            Some((p, v)) => {
                self.b.unbind(p);
                self.b.let_(p, v, body)
            }
            None => body,
        }
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

    /// The body of a work-group of a K-tiled block: `reduceSeq` over pairs of tiles, each
    /// staged in local memory, accumulating into the block (local memory, one element per
    /// work-item), starting from `z`; `None` when `g` is not `λc. reduce f z (map h (zip r c))`.
    /// `R` and `C` (the tiles) and the row variable `r` must be in scope.
    fn ktiled_body(&mut self, p: &Tiled, kt: i64) -> Option<ExprId> {
        let (fs, zs, hs, swapped) = self.dot_parts(&p.g, &p.r)?;
        let (fs, zs, hs) = (&fs, &zs, &hs);
        let [acc, tiles, la, lb, ar, ab, s, q, _v, _x, i] =
            ["acc", "tiles", "la", "lb", "ar", "ab", "s", "q", "v", "x", "i"].map(|n| self.name(n));
        // step = λacc tiles. let la = toLocal (copy (get 0 tiles)) in
        //   let lb = transpose (toLocal (copy (transpose (get 1 tiles)))) in
        //   mapLcl1 (λar. join (mapLcl0 (λab. reduceSeq (λs q. f s (h q)) (get 0 ab) (zip ..)) (zip (get 0 ar) lb))) (zip acc la)
        let (accv, tilesv) = (self.b.bind(&acc), self.b.bind(&tiles));
        let t0 = self.get(0, tilesv);
        let copied = self.tile_copy(t0);
        let la_val = self.b.to(AddressSpace::Local, copied);
        let lav = self.b.bind(&la);
        let t1 = self.get(1, tilesv);
        let t1t = self.b.prim(Prim::Transpose, vec![t1]);
        let copied = self.tile_copy(t1t);
        let staged = self.b.to(AddressSpace::Local, copied);
        let lb_val = self.b.prim(Prim::Transpose, vec![staged]);
        let lbv = self.b.bind(&lb);
        let arv = self.b.bind(&ar);
        let abv = self.b.bind(&ab);
        let (sv, qv) = (self.b.bind(&s), self.b.bind(&q));
        let hq = self.call(hs, &[Arg::Var(qv)]);
        let fsq = self.call(fs, &[Arg::Var(sv), Arg::Expr(hq)]);
        self.b.unbind(qv);
        self.b.unbind(sv);
        let red_fn = self.b.lambda(vec![sv, qv], fsq);
        let init = self.get(0, abv);
        let (x1, x2) = if swapped { (abv, arv) } else { (arv, abv) };
        let (g1, g2) = (self.get(1, x1), self.get(1, x2));
        let pair = self.b.prim(Prim::Zip, vec![g1, g2]);
        let dot = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![red_fn, init, pair]);
        self.b.unbind(abv);
        let dot_fn = self.b.lambda(vec![abv], dot);
        let ar0 = self.get(0, arv);
        let lbe = self.b.var(lbv);
        let row_pairs = self.b.prim(Prim::Zip, vec![ar0, lbe]);
        let row = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![dot_fn, row_pairs]);
        let row = self.b.prim(Prim::Join, vec![row]);
        self.b.unbind(arv);
        let row_fn = self.b.lambda(vec![arv], row);
        let acce = self.b.var(accv);
        let lae = self.b.var(lav);
        let acc_pairs = self.b.prim(Prim::Zip, vec![acce, lae]);
        let block = self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![row_fn, acc_pairs]);
        self.b.unbind(lbv);
        let block = self.b.let_(lbv, lb_val, block);
        self.b.unbind(lav);
        let block = self.b.let_(lav, la_val, block);
        self.b.unbind(tilesv);
        self.b.unbind(accv);
        let step = self.b.lambda(vec![accv, tilesv], block);
        // init = copy (split #t0 (generate #(t1·t0) (λi. z)))
        let iv = self.b.bind(&i);
        let zero = self.leaf(zs);
        self.b.unbind(iv);
        let gen_fn = self.b.lambda(vec![iv], zero);
        let generated = self
            .b
            .prim(Prim::Generate(arith::ArithExpr::cst(p.t1 * p.t0)), vec![gen_fn]);
        let tiles_init = self.b.prim(Prim::Split(arith::ArithExpr::cst(p.t0)), vec![generated]);
        let init = self.tile_copy(tiles_init);
        // pairs = zip (transpose (map (split #kt) R)) (transpose (map (split #kt) C))
        let re = self.b.name(&p.big_r);
        let rs = self.map_split(kt, re);
        let rs = self.b.prim(Prim::Transpose, vec![rs]);
        let ce = self.b.name(&p.big_c);
        let cs = self.map_split(kt, ce);
        let cs = self.b.prim(Prim::Transpose, vec![cs]);
        let pairs = self.b.prim(Prim::Zip, vec![rs, cs]);
        let acc = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, init, pairs]);
        Some(self.b.prim(Prim::Join, vec![acc]))
    }

    fn host_tiled(&mut self, p: &Tiled) -> Out {
        let (n1, n0) = (self.len(&p.xs), self.len(&p.ys));
        let k_len = self.eval(p.xs.inner.as_ref());
        let (xt, xc, xbind) = self.kernel_arg(&p.xs);
        let (yt, yc, ybind) = self.kernel_arg(&p.ys);
        let big_r = self.b.bind(&p.big_r);
        let zv = self.b.bind(&p.z);
        let ze = self.b.var(zv);
        let zj = self.b.prim(Prim::Join, vec![ze]);
        self.b.unbind(zv);
        let join_fn = self.b.lambda(vec![zv], zj);
        let big_c = self.b.bind(&p.big_c);
        let ktiled = p.ktile.and_then(|kt| self.ktiled_body(p, kt));
        let g_len = self.eval(p.ys.inner.as_ref());
        // the row function (with the row variable in scope); where the K-tiled body replaces
        // it, only its cost and notes count and its nodes are undone
        let mark = self.b.mark();
        let rv = self.b.bind(&p.r);
        let (g, gc) = self.func(&p.g, g_len);
        self.b.unbind(rv);
        if ktiled.is_some() {
            self.b.rollback(mark);
        }
        let (la, lb) = (self.name("la"), self.name("lb"));
        let body = match ktiled {
            Some(body) => body,
            None => {
                let mut lets = vec![];
                let rows = if p.stage_r {
                    let re = self.b.name(&p.big_r);
                    let copied = self.tile_copy(re);
                    let staged = self.b.to(AddressSpace::Local, copied);
                    let v = self.b.bind(&la);
                    lets.push((v, staged));
                    self.b.var(v)
                } else {
                    self.b.name(&p.big_r)
                };
                let cols = if p.stage_c {
                    let ce = self.b.name(&p.big_c);
                    let staged = if self.is_transpose(&p.ys) {
                        let t = self.b.prim(Prim::Transpose, vec![ce]);
                        let copied = self.tile_copy(t);
                        let staged = self.b.to(AddressSpace::Local, copied);
                        self.b.prim(Prim::Transpose, vec![staged])
                    } else {
                        let copied = self.tile_copy(ce);
                        self.b.to(AddressSpace::Local, copied)
                    };
                    let v = self.b.bind(&lb);
                    lets.push((v, staged));
                    self.b.var(v)
                } else {
                    self.b.name(&p.big_c)
                };
                let inner = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![g, cols]);
                let inner = if p.joined {
                    self.b.prim(Prim::Join, vec![inner])
                } else {
                    inner
                };
                let row_fn = self.b.lambda(vec![rv], inner);
                let mut body = self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![row_fn, rows]);
                for (v, value) in lets.into_iter().rev() {
                    self.b.unbind(v);
                    body = self.b.let_(v, value, body);
                }
                body
            }
        };
        self.b.unbind(big_c);
        let block_fn = self.b.lambda(vec![big_c], body);
        let cols = self.b.prim(Prim::Split(arith::ArithExpr::cst(p.t0)), vec![yt]);
        let blocks = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![block_fn, cols]);
        let blocks = self.b.prim(Prim::Transpose, vec![blocks]);
        let rows_of_blocks = self.b.prim(Prim::Map(MapKind::Plain), vec![join_fn, blocks]);
        self.b.unbind(big_r);
        let row_block_fn = self.b.lambda(vec![big_r], rows_of_blocks);
        let rows = self.b.prim(Prim::Split(arith::ArithExpr::cst(p.t1)), vec![xt]);
        let tiles = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![row_block_fn, rows]);
        let joined = self.b.prim(Prim::Join, vec![tiles]);
        let e = self.b.to(AddressSpace::Global, joined);
        self.notes.push(format!(
            "mapWrg1×mapWrg0 tiles of {}×{}, {}",
            p.t1,
            p.t0,
            match (p.stage_r, p.stage_c) {
                _ if ktiled.is_some() => "accumulated over K in tiles staged in local memory",
                (true, true) => "both tiles in local memory",
                (true, false) => "row tile in local memory",
                (false, true) => "column tile in local memory",
                (false, false) => "no staging",
            }
        ));
        let threads = n1 * n0;
        let group = (p.t1 * p.t0) as f64;
        // Small work-groups leave a GPU's cores idle.
        let under = if group < 64.0 { 2.0 } else { 1.0 };
        // Staging does not remove arithmetic, and caches already serve the repeated global
        // reads of the unstaged variant (measured on an H200: 4×4 tiles staged over all of K
        // ran 18× slower than `mapGlb1`×`mapGlb`): each work-item pays its share of the copy
        // and its barriers.
        // (+1 per work-item: the block's index arithmetic)
        let compute = (threads / self.lanes).ceil() * (gc * under + 1.0);
        let stage = if let (Some(kt), true) = (p.ktile, ktiled.is_some()) {
            // per tile of K: the two staged copies, four barriers and the accumulator's
            // round trip through local memory
            (threads / self.lanes).ceil()
                * (k_len / kt as f64)
                * (kt as f64 * (1.0 / p.t0 as f64 + 1.0 / p.t1 as f64) + 6.0)
        } else {
            (threads / self.lanes).ceil()
                * k_len
                * 2.0
                * (if p.stage_r { 1.0 / p.t0 as f64 } else { 0.0 } + if p.stage_c { 1.0 / p.t1 as f64 } else { 0.0 })
        };
        let e = self.wrap(xbind, e);
        let e = self.wrap(ybind, e);
        (e, xc + yc + compute + stage + threads * MEM + LAUNCH)
    }

    /// `λz. join z`.
    fn join_fn(&mut self) -> ExprId {
        let z = self.name("z");
        let zv = self.b.bind(&z);
        let ze = self.b.var(zv);
        let zj = self.b.prim(Prim::Join, vec![ze]);
        self.b.unbind(zv);
        self.b.lambda(vec![zv], zj)
    }

    /// `mapLcl1 (λrs. mapSeq (λrow. mapLcl0 f row) rs) (transpose (split r tile))`: a `k × k`
    /// tile mapped by `k × r` work-items, item `(i, j)` taking element `i` of rows `j`, `j + r`,
    /// …, so that each row is read (or written) by consecutive work-items; the result is laid
    /// out `[r][k / r][k]` (see [`Self::unstrided`]).
    fn strided_rows(&mut self, f: ExprId, tile: ExprId, rows: i64) -> ExprId {
        let split = self.b.prim(Prim::Split(arith::ArithExpr::cst(rows)), vec![tile]);
        let rows = self.b.prim(Prim::Transpose, vec![split]);
        let (rs, row) = (self.name("rs"), self.name("row"));
        let rsv = self.b.bind(&rs);
        let rowv = self.b.bind(&row);
        let rowe = self.b.var(rowv);
        let lcl0 = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![f, rowe]);
        self.b.unbind(rowv);
        let row_fn = self.b.lambda(vec![rowv], lcl0);
        let rse = self.b.var(rsv);
        let seq = self.b.prim(Prim::Map(MapKind::Seq), vec![row_fn, rse]);
        self.b.unbind(rsv);
        let rs_fn = self.b.lambda(vec![rsv], seq);
        self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![rs_fn, rows])
    }

    /// `join (transpose x)`: the tile that [`Self::strided_rows`] lays out by work-item rows.
    fn unstrided(&mut self, x: ExprId) -> ExprId {
        let t = self.b.prim(Prim::Transpose, vec![x]);
        self.b.prim(Prim::Join, vec![t])
    }

    /// `ttile k f m` (see `egraph::TransposeTile`):
    /// `join (mapWrg1 (λrow. map (λz. join z) (transpose (mapWrg0 (λtile. let l = toLocal (copy
    /// tile) in unstrided (strided_rows f (transpose (unstrided l)))) row))) (transpose (map (λrb.
    /// transpose (map (split k) rb)) (split k m))))`: work-group `(J, I)` of `k × ttile_rows(k)`
    /// work-items copies the tile of rows `I` and columns `J` of `m` along its rows and writes it
    /// transposed along the rows of the result, `k / ttile_rows(k)` elements per work-item each
    /// way (more loads in flight per work-item than one element each; a `32 × 32` work-group
    /// is more than many GPUs take). The local tile's rows are padded by code generation, so
    /// the column reads of the transposed write do not conflict in local memory banks.
    fn host_ttile(&mut self, t: &Rc<Term>, k: i64) -> Out {
        let (f, m) = (&t.kids[1], &t.kids[2]);
        let threads = self.len(m) * self.eval(m.inner.as_ref());
        let (mt, mc, bind) = self.kernel_arg(m);
        let (g, gc) = self.func(f, 1.0);
        let rb = self.name("rb");
        let rbv = self.b.bind(&rb);
        let rbe = self.b.var(rbv);
        let cols = self.map_split(k, rbe);
        let cols = self.b.prim(Prim::Transpose, vec![cols]);
        self.b.unbind(rbv);
        let rb_fn = self.b.lambda(vec![rbv], cols);
        let rows = self.b.prim(Prim::Split(arith::ArithExpr::cst(k)), vec![mt]);
        let tiles = self.b.prim(Prim::Map(MapKind::Plain), vec![rb_fn, rows]);
        let tiles = self.b.prim(Prim::Transpose, vec![tiles]);
        let join_fn = self.join_fn();
        let (row, tile, l, x) = (self.name("row"), self.name("tile"), self.name("l"), self.name("x"));
        let rowv = self.b.bind(&row);
        let tilev = self.b.bind(&tile);
        let te = self.b.var(tilev);
        let xv = self.b.bind(&x);
        let xe = self.b.var(xv);
        self.b.unbind(xv);
        let id = self.b.lambda(vec![xv], xe);
        let rows_of_items = ttile_rows(k);
        let copied = self.strided_rows(id, te, rows_of_items);
        let staged = self.b.to(AddressSpace::Local, copied);
        let lv = self.b.bind(&l);
        let le = self.b.var(lv);
        let lt = self.unstrided(le);
        let lt = self.b.prim(Prim::Transpose, vec![lt]);
        let out = self.strided_rows(g, lt, rows_of_items);
        let body = self.unstrided(out);
        self.b.unbind(lv);
        let body = self.b.let_(lv, staged, body);
        self.b.unbind(tilev);
        let tile_fn = self.b.lambda(vec![tilev], body);
        let rowe = self.b.var(rowv);
        let blocks = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![tile_fn, rowe]);
        let blocks = self.b.prim(Prim::Transpose, vec![blocks]);
        let out_rows = self.b.prim(Prim::Map(MapKind::Plain), vec![join_fn, blocks]);
        self.b.unbind(rowv);
        let row_fn = self.b.lambda(vec![rowv], out_rows);
        let groups = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![row_fn, tiles]);
        let joined = self.b.prim(Prim::Join, vec![groups]);
        let e = self.b.to(AddressSpace::Global, joined);
        self.notes.push(format!(
            "mapWrg1×mapWrg0 transpose tiles of {k}×{k} staged in local memory, {k}×{rows_of_items} work-items"
        ));
        // per element: the function, the copy into local memory and its barrier
        let cost = (threads / self.lanes).ceil() * (gc + 3.0) + threads / (k / rows_of_items) as f64 * MEM + LAUNCH;
        (self.wrap(bind, e), mc + cost)
    }

    /// Elements of the transposed matrix a kernel over `x` moves with a stride of a row, when
    /// it copies the rows of a transpose element by element (`row_fn` maps an element function
    /// over each): the reads along a row of the transpose, or else the writes of the rows, are
    /// strided. Only such element-wise copies pay it: a kernel that reduces over its rows (gemv
    /// T, atax, a convolution) reads a transpose's columns with consecutive work-items at
    /// consecutive addresses and writes one element per row, and the previous session's
    /// broader penalty pushed those kernels' fast variants out of `lift tune`'s top-k.
    fn strided(&self, row_fn: &Term, x: &Term) -> f64 {
        /// Whether `f` maps its argument to an array element by element, nothing reduced.
        fn elementwise(f: &Term) -> bool {
            match &f.op {
                TOp::Lam => array_body(&f.kids[1]),
                TOp::MapF => matches!(f.kids[0].op, TOp::Sym(_)) || elementwise(&f.kids[0]),
                TOp::Comp => elementwise(&f.kids[0]) && elementwise(&f.kids[1]),
                _ => false,
            }
        }
        fn array_body(b: &Term) -> bool {
            match &b.op {
                TOp::Map => (matches!(b.kids[0].op, TOp::Sym(_)) || elementwise(&b.kids[0])) && layout_only(&b.kids[1]),
                TOp::Join | TOp::AsScalar => array_body(&b.kids[0]),
                _ => false,
            }
        }
        fn layout_only(t: &Term) -> bool {
            match &t.op {
                TOp::Sym(_) | TOp::Num(_) => true,
                TOp::Split(_) | TOp::AsVector(_) | TOp::Join | TOp::AsScalar | TOp::Transpose => {
                    t.kids.iter().all(|k| layout_only(k))
                }
                _ => false,
            }
        }
        let mut a = x;
        loop {
            match a.op {
                TOp::Split(_) | TOp::AsVector(_) => a = &a.kids[1],
                TOp::Join | TOp::AsScalar => a = &a.kids[0],
                _ => break,
            }
        }
        if self.is_transpose(a) && elementwise(row_fn) {
            self.len(a) * self.eval(a.inner.as_ref()) * STRIDED
        } else {
            0.0
        }
    }

    /// The rows of `x` (`x` itself, or the rows beside a vector in `zip a rows`) that a kernel
    /// mapping one element of `x` per work-item reads from global memory a row apart, and
    /// their length; as `egraph::staged_rows` decides (a stageable length, not a transpose).
    fn read_rows<'t>(&self, x: &'t Rc<Term>) -> Option<RowsRead<'t>> {
        let stageable = |r: &Rc<Term>| {
            let len = self.eval(r.inner.as_ref());
            // a variable, as in `egraph::staged_rows` (a view such as `slide`'s windows may
            // have whole rows of a matrix as elements)
            let variable = matches!(&r.op, TOp::Sym(s) if !self.origin.contains_key(s));
            (variable && r.inner.is_some() && len >= 8.0 && len * 4.0 <= crate::egraph::STAGED_ROW_BYTES as f64)
                .then_some(len)
        };
        if let TOp::Other(s) = &x.op {
            if self.leaf_text(s) == "zip" && x.kids.len() == 2 && x.kids[0].inner.is_none() {
                return stageable(&x.kids[1]).map(|l| (&x.kids[1], Some(&x.kids[0]), l));
            }
        }
        stageable(x).map(|l| (x, None, l))
    }

    /// Extra cost of a kernel whose `threads` work-items each read a row of `x` (split into
    /// chunks or not), where `stage-rows` offers the staged alternative: neighbouring work-items
    /// read addresses a row apart, so each load instruction touches one memory segment per
    /// work-item instead of one for all. Charged only where staging is possible (rows of at
    /// most `egraph::STAGED_ROW_BYTES`), so the estimates of programs without the alternative keep
    /// their order.
    fn row_reads(&self, x: &Rc<Term>, threads: f64) -> f64 {
        let x = match x.op {
            TOp::Split(_) => &x.kids[1],
            _ => x,
        };
        self.read_rows(x)
            .map_or(0.0, |(_, _, len)| (threads / self.lanes).ceil() * len * ROW_STRIDED)
    }

    /// `map (mapf f) (stage (split t X))` (see `egraph` rule `stage-rows`): `mapWrg (λc. let l =
    /// toLocal (split L (mapLcl0 (λx. x) (join c))) in mapLcl0 f l) (split t X)`: the work-group
    /// copies its `t` rows of length `L` as one contiguous block, consecutive work-items at
    /// consecutive addresses, then each work-item computes from its row in local memory (whose
    /// rows code generation pads against bank conflicts). For `X = zip a R` only `R` is staged:
    /// `mapWrg (λc. let l = … (get 1 c) … in mapLcl0 f (zip (get 0 c) l)) (zip (split t a)
    /// (split t R))`.
    /// With `vec` (rule `stage-rows-vec`, float rows, `4 | t`) the block is copied as float4
    /// into local memory read as `split L (asScalar l)`: `l = toLocal (mapLcl0 (λx. x)
    /// (asVector 4 (join c)))`, a quarter of the copy's loads and stores and no padding,
    /// whose index into a row of run-time length divides every element's position by it.
    fn host_staged_rows(&mut self, f: &Rc<Term>, split: &Rc<Term>, vec: bool) -> Out {
        let TOp::Split(t) = split.op else {
            unreachable!("host() checked the split")
        };
        let x = &split.kids[1];
        let Some((rows, beside, len)) = self.read_rows(x) else {
            // not a block of rows this lowering stages (the rule's estimate and the lowering's
            // may differ): the unstaged kernel
            let plain = Term::new(
                TOp::Map,
                vec![Term::new(TOp::MapF, vec![f.clone()], None, None), split.clone()],
                split.len.clone(),
                None,
            );
            return self.host(&plain);
        };
        let (rows, beside) = (rows.clone(), beside.cloned());
        let n = self.len(split);
        let threads = n * t as f64;
        let row_len = rows.inner.clone().expect("read_rows checked the row length");
        let elem_len = self.eval(split.kids[1].inner.as_ref());
        let (g, gc) = self.func(f, elem_len);
        let (rt, rc, rbind) = self.kernel_arg(&rows);
        let rs = self.b.prim(Prim::Split(arith::ArithExpr::cst(t)), vec![rt]);
        let (chunks, ac, abind) = match &beside {
            Some(a) => {
                let (at, ac, abind) = self.kernel_arg(a);
                let as_ = self.b.prim(Prim::Split(arith::ArithExpr::cst(t)), vec![at]);
                (self.b.prim(Prim::Zip, vec![as_, rs]), ac, abind)
            }
            None => (rs, 0.0, None),
        };
        let (c, l, x) = (self.name("chunk"), self.name("l"), self.name("x"));
        let cv = self.b.bind(&c);
        let block = match beside {
            Some(_) => self.get(1, cv),
            None => self.b.var(cv),
        };
        let flat = self.b.prim(Prim::Join, vec![block]);
        let xv = self.b.bind(&x);
        let xe = self.b.var(xv);
        self.b.unbind(xv);
        let id = self.b.lambda(vec![xv], xe);
        let (staged, lv, le) = if vec {
            let flat = self.b.prim(Prim::AsVector(VEC_COPY as u8), vec![flat]);
            let copied = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, flat]);
            let staged = self.b.to(AddressSpace::Local, copied);
            let lv = self.b.bind(&l);
            let le = self.b.var(lv);
            let le = self.b.prim(Prim::AsScalar, vec![le]);
            (staged, lv, self.b.prim(Prim::Split(row_len.clone()), vec![le]))
        } else {
            let copied = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, flat]);
            let copied = self.b.prim(Prim::Split(row_len.clone()), vec![copied]);
            let staged = self.b.to(AddressSpace::Local, copied);
            let lv = self.b.bind(&l);
            let le = self.b.var(lv);
            (staged, lv, le)
        };
        let items = match beside {
            Some(_) => {
                let a = self.get(0, cv);
                self.b.prim(Prim::Zip, vec![a, le])
            }
            None => le,
        };
        let body = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![g, items]);
        self.b.unbind(lv);
        let body = self.b.let_(lv, staged, body);
        self.b.unbind(cv);
        let chunk_fn = self.b.lambda(vec![cv], body);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![chunk_fn, chunks]);
        let e = self.b.to(AddressSpace::Global, e);
        let e = self.wrap(abind, e);
        let e = self.wrap(rbind, e);
        let under = if t < 32 { 1.25 } else { 1.0 };
        let waves = (threads / self.lanes).ceil();
        let writes = self.extra_writes(f, threads);
        let cost = writes
            + if vec {
                self.notes.push(format!(
                    "mapWrg {n} groups × mapLcl {t}, rows staged in local memory as float4"
                ));
                // a quarter of the copy's instructions and no division; the compute's reads of
                // rows of an even length share banks (see `row_bank_ways`), each extra way a read
                // of local memory
                let copy = waves * (len * STAGED_COPY / VEC_COPY as f64 + 2.0);
                let conflicts = waves * (row_bank_ways(&row_len, self.sizes) - 1.0) * len * LOCAL_READ;
                under * waves * gc + threads * MEM + copy + conflicts
            } else {
                self.notes
                    .push(format!("mapWrg {n} groups × mapLcl {t}, rows staged in local memory"));
                // each work-item copies a row's worth of elements, then waits at one barrier
                let copy = waves * (len * STAGED_COPY + 2.0);
                under * waves * gc + threads * MEM + copy
            };
        (e, rc + ac + cost + LAUNCH)
    }

    /// Code at host level: a sequence of kernels.
    pub fn host(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        if let Some(p) = tiled(t) {
            return self.host_tiled(&p);
        }
        if let TOp::TTile(tk) = t.op {
            return self.host_ttile(t, tk);
        }
        if let Some(out) = self.host_reuse(t) {
            return out;
        }
        if let Some(out) = self.host_batch_rblock(t) {
            return out;
        }
        if let TOp::RBlock(c) = t.op {
            if c & crate::egraph::RBLOCK_ROWS != 0 {
                return self.host_rblock_rows(t, c);
            }
            return self.host_rblock(t, crate::egraph::RegBlockSizes::unpack(c));
        }
        match &t.op {
            TOp::Map if k[0].op == TOp::Lam && has_wg(&k[0].kids[1]) => self.host_wg(&k[0], &k[1]),
            TOp::WgReduce(_) => self.host(&as_reduce(t)),
            TOp::GridReduce(g, s) => self.host_grid(*g, *s, &k[2], &k[3], &k[4]),
            TOp::Map if k[0].op == TOp::MapF && k[1].op == TOp::Stage && matches!(k[1].kids[0].op, TOp::Split(_)) => {
                self.host_staged_rows(&k[0].kids[0], &k[1].kids[0], false)
            }
            TOp::Map
                if k[0].op == TOp::MapF && k[1].op == TOp::StageVec && matches!(k[1].kids[0].op, TOp::Split(_)) =>
            {
                self.host_staged_rows(&k[0].kids[0], &k[1].kids[0], true)
            }
            TOp::Map => {
                let (f, x) = (&k[0], &k[1]);
                let n = self.len(x);
                let (xt, xc, bind) = self.kernel_arg(x);
                let m = self.eval(x.inner.as_ref());
                let (e, cost) = if f.op == TOp::MapF {
                    // the elements of a chunk of `split k y` are the elements of `y`
                    let elem_len = match x.op {
                        TOp::Split(_) => self.eval(x.kids[1].inner.as_ref()),
                        _ => 1.0,
                    };
                    let (g, gc) = self.func(&f.kids[0], elem_len);
                    let c = self.name("chunk");
                    self.notes.push(format!("mapWrg {n} groups × mapLcl {m}"));
                    let threads = n * m;
                    let under = if m < 32.0 { 1.25 } else { 1.0 };
                    let cv = self.b.bind(&c);
                    let ce = self.b.var(cv);
                    let lcl = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![g, ce]);
                    self.b.unbind(cv);
                    let chunk_fn = self.b.lambda(vec![cv], lcl);
                    (
                        self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![chunk_fn, xt]),
                        under * (threads / self.lanes).ceil() * (gc + GROUP_END_BARRIER)
                            + threads * MEM
                            + self.extra_writes(f, threads)
                            + self.strided(&f.kids[0], x)
                            + self.row_reads(x, threads),
                    )
                } else if let Some((inner, joined)) = two_d(f).filter(|(i, _)| !self.computes(&i.kids[1])) {
                    let m = self.len(&inner.kids[1]);
                    let pv = self.b.bind(&Self::sym_name(&f.kids[0]));
                    let (g, gc) = self.func(&inner.kids[0], self.eval(inner.kids[1].inner.as_ref()));
                    let (y, _) = self.seq(&inner.kids[1]);
                    self.notes.push(format!("mapGlb1 {n} × mapGlb {m}"));
                    let threads = n * m;
                    let body = self.b.prim(Prim::Map(MapKind::Glb(0)), vec![g, y]);
                    let body = (0..joined).fold(body, |b, _| self.b.prim(Prim::Join, vec![b]));
                    self.b.unbind(pv);
                    let row_fn = self.b.lambda(vec![pv], body);
                    (
                        self.b.prim(Prim::Map(MapKind::Glb(1)), vec![row_fn, xt]),
                        (threads / self.lanes).ceil() * gc
                            + threads * MEM
                            + self.extra_writes(&inner.kids[0], threads)
                            + self.strided(f, x)
                            + self.chunk_strided(&inner.kids[0], &inner.kids[1], threads),
                    )
                } else {
                    let (g, gc) = self.func(f, m);
                    self.notes.push(format!("mapGlb {n}"));
                    (
                        self.b.prim(Prim::Map(MapKind::Glb(0)), vec![g, xt]),
                        self.glb_waves(x, n) * gc
                            + n * MEM
                            + self.extra_writes(f, n)
                            + self.strided(f, x)
                            + self.row_reads(x, n),
                    )
                };
                let e = self.b.to(AddressSpace::Global, e);
                (self.wrap(bind, e), xc + cost + LAUNCH)
            }
            TOp::Reduce => {
                let x = &k[2];
                // a reduction of a map over plain inputs stays one fused kernel
                let fused = x.op == TOp::Map && !self.computes(&x.kids[1]);
                if self.computes(x) && !fused {
                    let (xt, xc, bind) = self.kernel_arg(x);
                    let n = self.len(x);
                    let (f, fc) = self.func(&k[0], 1.0);
                    let (z, _) = self.seq(&k[1]);
                    self.notes.push(format!("final reduceSeq over {n}"));
                    let r = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![f, z, xt]);
                    let e = self.b.to(AddressSpace::Global, r);
                    return (self.wrap(bind, e), xc + n * (fc + 1.0) + LAUNCH);
                }
                let (s, c) = self.seq(t);
                self.notes.push(format!("one-work-item reduceSeq over {}", self.len(x)));
                (self.b.to(AddressSpace::Global, s), c + LAUNCH)
            }
            // a view bound at host level is read where it is used, not made by a kernel
            TOp::Let if !self.computes(&k[1]) => {
                let (v, vc) = self.seq(&k[1]);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.host(&k[2]);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            TOp::Let => {
                let (v, vc) = self.host(&k[1]);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.host(&k[2]);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            TOp::Sym(s) => (self.leaf(s), 0.0),
            TOp::Other(_) if self.computes(t) => {
                let (s, c) = self.layout(t, true);
                (s, c + LAUNCH + self.len(t) * MEM)
            }
            TOp::ColReduce(bc, r, g) => self.host_colreduce(t, (*bc, *r, *g), false),
            // the join inside the second kernel's `let`, so the result is written in place
            TOp::Join if matches!(k[0].op, TOp::ColReduce(..)) => {
                let TOp::ColReduce(bc, r, g) = k[0].op else {
                    unreachable!("matched above")
                };
                self.host_colreduce(&k[0], (bc, r, g), true)
            }
            _ => self.layout(t, true),
        }
    }
}

/// Whether `t` holds a work-group reduction outside any function of it: run at work-group level
/// when `t` is the body of a `mapWrg`'s function.
fn has_wg(t: &Term) -> bool {
    match t.op {
        TOp::WgReduce(_) => true,
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => false,
        _ => t.kids.iter().any(|k| has_wg(k)),
    }
}

/// `wgreduce s f z xs` as the `reduce f z xs` it equals.
fn as_reduce(t: &Rc<Term>) -> Rc<Term> {
    Term::new(TOp::Reduce, t.kids[1..].to_vec(), t.len.clone(), t.inner.clone())
}

/// The largest work-group of the work-group reductions in `t` (at work-group level).
fn wg_size(t: &Term) -> i64 {
    match t.op {
        TOp::WgReduce(s) => s,
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => 1,
        _ => t.kids.iter().map(|k| wg_size(k)).max().unwrap_or(1),
    }
}

/// Local memory traffic and a barrier of one step of a work-group's tree, per work-item.
const TREE_STEP: f64 = 6.0;
/// How much slower a work-group reads a row of a transposed array (a stride of a whole row
/// between work-items, no coalescing) than a row of a plain one.
const UNCOALESCED: f64 = 8.0;

impl Lowerer<'_> {
    /// Whether the rows of `x` are columns of a stored array (so consecutive elements of a row
    /// are a row apart in memory).
    fn reads_columns(&self, x: &Term) -> bool {
        match &x.op {
            TOp::Transpose => true,
            TOp::Other(s) => {
                let head = self.leaf_text(s);
                head == "transpose" || (head == "zip" && x.kids.iter().any(|k| self.reads_columns(k)))
            }
            _ => false,
        }
    }

    /// `map (λr. body) xs` whose body holds work-group reductions: `mapWrg` over `xs`, the body
    /// at work-group level (`grp_out`).
    fn host_wg(&mut self, f: &Rc<Term>, x: &Rc<Term>) -> Out {
        let n = self.len(x);
        let s = wg_size(&f.kids[1]);
        let (xt, xc, bind) = self.kernel_arg(x);
        let pv = self.b.bind(&Self::sym_name(&f.kids[0]));
        let (body, bc) = self.grp_out(&f.kids[1], s);
        self.b.unbind(pv);
        let row_fn = self.b.lambda(vec![pv], body);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![row_fn, xt]);
        self.notes
            .push(format!("mapWrg {n} groups × work-group reduction by {s}"));
        let threads = n * s as f64;
        let strided = if self.reads_columns(x) { UNCOALESCED } else { 1.0 };
        let cost = (threads / (self.lanes * wg_occupancy(s))).ceil() * bc * strided + n * MEM;
        (self.wrap(bind, e), xc + cost + LAUNCH)
    }

    /// The body of a work-group whose value goes to global memory: its last map is a `mapLcl`
    /// writing there, or the value (in local memory) is copied there by one.
    fn grp_out(&mut self, t: &Rc<Term>, group: i64) -> Out {
        match t.op {
            TOp::Let if has_wg(&t.kids[1]) || has_wg(&t.kids[2]) => {
                let k = &t.kids;
                let (v, vc) = self.grp(&k[1], group);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.grp_out(&k[2], group);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            TOp::Map => {
                let (e, c) = self.grp(t, group);
                (self.b.to(AddressSpace::Global, e), c)
            }
            _ => {
                let (e, c) = self.grp(t, group);
                let x = self.b.bind("x");
                let xe = self.b.var(x);
                self.b.unbind(x);
                let id = self.b.lambda(vec![x], xe);
                let copy = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, e]);
                (self.b.to(AddressSpace::Global, copy), c + 1.0)
            }
        }
    }

    /// Code at work-group level: maps are `mapLcl`, work-group reductions trees in local
    /// memory, views stay views; the cost is per work-item. Every work-group reduction uses
    /// all `group` work-items where it divides the length (a smaller one would leave some idle).
    fn grp(&mut self, t: &Rc<Term>, group: i64) -> Out {
        let k = &t.kids;
        match &t.op {
            TOp::WgReduce(s) => self.grp_wg(*s, &k[1], &k[2], &k[3], group),
            // let v = xs in wgreduce s f z v = wgreduce s f z xs: `xs` (a map) fused into the
            // work-items' loop, not stored first
            TOp::Let if matches!(k[2].op, TOp::WgReduce(_)) && k[2].kids[3].op == k[0].op => {
                let TOp::WgReduce(s) = k[2].op else {
                    unreachable!("matched")
                };
                self.grp_wg(s, &k[2].kids[1], &k[2].kids[2], &k[1], group)
            }
            TOp::Map => {
                let (f, fc) = self.func(&k[0], self.eval(k[1].inner.as_ref()));
                let (x, xc) = self.grp(&k[1], group);
                (self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![f, x]), xc + fc + 1.0)
            }
            TOp::Let => {
                let (v, vc) = self.grp(&k[1], group);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.grp(&k[2], group);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            TOp::Join if has_wg(t) => {
                let (x, c) = self.grp(&k[0], group);
                (self.b.prim(Prim::Join, vec![x]), c)
            }
            TOp::Other(s) if has_wg(t) => {
                let mut args = vec![];
                let mut cost = 0.0;
                for kid in k {
                    let (a, c) = if is_fun(kid) {
                        self.func(kid, self.eval(t.inner.as_ref()))
                    } else {
                        self.grp(kid, group)
                    };
                    args.push(a);
                    cost += c;
                }
                match self.head(s) {
                    Some((prim, span)) => (self.b.prim_at(prim, args, span), cost),
                    None => {
                        self.b.broken.get_or_insert_with(|| format!("no primitive for `{s}`"));
                        (self.b.int(0), cost)
                    }
                }
            }
            _ => self.seq(t),
        }
    }

    /// `reduce f z xs` by a work-group of `s` work-items:
    /// `iterate #log2(s) (λa. join (mapLcl (λp. toLocal (reduceSeqUnroll f z p)) (split #2 a)))
    ///   (join (mapLcl (λc. toLocal (reduceSeq f z c)) (transpose (split #s xs))))`:
    /// work-item `l` first reduces `xs[l], xs[l+s], …` (a map producing `xs` is fused into that
    /// loop), then each step of the tree halves the partial results in local memory.
    fn wg_tree(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        self.wg_tree_by(s, f, z, x, None)
    }

    /// `wg_tree`; with `guard = Some(h)`, `x` holds `(y, in range)` pairs
    /// (`Lowerer::guarded_elems`) and the elements reduced are `h y` of the pairs in range.
    fn wg_tree_by(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>, guard: Option<&Symbol>) -> Out {
        let chunk_len = x.len.as_ref().map(|l| l.div_assume_exact(&arith::ArithExpr::cst(s)));
        let c = self.name("chunk");
        let chunk = Term::new(TOp::Sym(Symbol::from(c.as_str())), vec![], chunk_len.clone(), None);
        // the chunks are of the map's argument, the map fused into their reduction
        let (data, elems) = match &x.op {
            TOp::Map if matches!(x.kids[0].op, TOp::Sym(_)) => (
                x.kids[1].clone(),
                Term::new(TOp::Map, vec![x.kids[0].clone(), chunk], chunk_len.clone(), None),
            ),
            _ => (x.clone(), chunk),
        };
        let (d, dc) = self.seq(&data);
        self.wg_tree_over(s, f, z, (d, dc), (&c, chunk_len), elems, guard)
    }

    /// The rest of `wg_tree_by` once its data `d` is built: the chunks of `d` named `c` (of
    /// length `chunk_len`), each reduced as `elems` (a term over `c`) by one work-item, then
    /// the tree.
    #[allow(clippy::too_many_arguments)]
    fn wg_tree_over(
        &mut self,
        s: i64,
        f: &Rc<Term>,
        z: &Rc<Term>,
        (d, dc): Out,
        (c, chunk_len): (&str, Option<arith::ArithExpr>),
        elems: Rc<Term>,
        guard: Option<&Symbol>,
    ) -> Out {
        self.wg_tree_fold(s, f, z, (d, dc), (c, chunk_len), elems, ChunkFold::from(guard))
    }

    /// `wg_tree_over` with the work-items' fold of their chunks given by `fold`.
    #[allow(clippy::too_many_arguments)]
    fn wg_tree_fold(
        &mut self,
        s: i64,
        f: &Rc<Term>,
        z: &Rc<Term>,
        (d, dc): Out,
        (c, chunk_len): (&str, Option<arith::ArithExpr>),
        elems: Rc<Term>,
        fold: ChunkFold,
    ) -> Out {
        let red = Term::new(
            TOp::Reduce,
            vec![f.clone(), z.clone(), elems],
            Some(arith::ArithExpr::cst(1)),
            None,
        );
        let cv = self.b.bind(c);
        let (r, rc) = match (fold, &f.op) {
            (ChunkFold::Guarded(h), TOp::Sym(fs)) => self.guarded_reduce(fs, z, &h, cv, chunk_len.as_ref()),
            (ChunkFold::Lanes { h, w }, TOp::Sym(fs)) => {
                self.lanes_reduce(fs, z, h.as_ref(), w, cv, chunk_len.as_ref())
            }
            (ChunkFold::Guarded(_) | ChunkFold::Lanes { .. }, _) => {
                self.b
                    .broken
                    .get_or_insert_with(|| "a guarded reduction of a non-leaf function".into());
                (self.b.int(0), 0.0)
            }
            (ChunkFold::Plain, _) => self.seq(&red),
        };
        self.b.unbind(cv);
        let r = self.b.to(AddressSpace::Local, r);
        let chunk_fn = self.b.lambda(vec![cv], r);
        let split = self.b.prim(Prim::Split(arith::ArithExpr::cst(s)), vec![d]);
        let chunks = self.b.prim(Prim::Transpose, vec![split]);
        let partials = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![chunk_fn, chunks]);
        let partials = self.b.prim(Prim::Join, vec![partials]);
        // the tree: each step sums pairs
        let steps = i64::from(s.max(1).ilog2());
        let (a, p) = (self.name("a"), self.name("pair"));
        let av = self.b.bind(&a);
        let pv = self.b.bind(&p);
        let (fl, fc) = self.func(f, 1.0);
        let (zl, _) = self.seq(z);
        let pe = self.b.var(pv);
        let pair = self.b.prim(Prim::Reduce(ReduceKind::SeqUnroll), vec![fl, zl, pe]);
        let pair = self.b.to(AddressSpace::Local, pair);
        self.b.unbind(pv);
        let pair_fn = self.b.lambda(vec![pv], pair);
        let ae = self.b.var(av);
        let halves = self.b.prim(Prim::Split(arith::ArithExpr::cst(2)), vec![ae]);
        let step = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![pair_fn, halves]);
        let step = self.b.prim(Prim::Join, vec![step]);
        self.b.unbind(av);
        let step_fn = self.b.lambda(vec![av], step);
        let tree = self
            .b
            .prim(Prim::Iterate(arith::ArithExpr::cst(steps)), vec![step_fn, partials]);
        (tree, dc + rc + steps as f64 * (2.0 * fc + TREE_STEP))
    }
}

/// `colreduce bc r g f xs` as the `map f xs` it equals.
fn as_map(t: &Rc<Term>) -> Rc<Term> {
    Term::new(TOp::Map, t.kids[3..].to_vec(), t.len.clone(), t.inner.clone())
}

/// The reductions `t` computes at its own level (not inside its functions).
fn reductions(t: &Term) -> usize {
    let own = usize::from(matches!(t.op, TOp::Reduce | TOp::ReduceU | TOp::WgReduce(_)));
    own + t
        .kids
        .iter()
        .filter(|k| !is_fun(k))
        .map(|k| reductions(k))
        .sum::<usize>()
}

/// The kid indices from `t` down to its one reduction (see [`reductions`]).
fn reduction_path(t: &Term) -> Option<Vec<usize>> {
    if matches!(t.op, TOp::Reduce | TOp::ReduceU | TOp::WgReduce(_)) {
        return Some(vec![]);
    }
    t.kids.iter().enumerate().find_map(|(i, k)| {
        if is_fun(k) {
            return None;
        }
        reduction_path(k).map(|mut p| {
            p.insert(0, i);
            p
        })
    })
}

/// `t` with the node at `path` replaced by `by`.
fn replace_at(t: &Rc<Term>, path: &[usize], by: &Rc<Term>) -> Rc<Term> {
    let Some((&i, rest)) = path.split_first() else {
        return by.clone();
    };
    let mut kids = t.kids.clone();
    kids[i] = replace_at(&t.kids[i], rest, by);
    Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
}

/// The reduction a column block splits: `reduce f z (map h data)`, or `reduce f z data`.
struct ColRed<'t> {
    f: &'t Rc<Term>,
    z: &'t Rc<Term>,
    h: Option<&'t Rc<Term>>,
    data: &'t Rc<Term>,
}

/// Local memory traffic, a barrier and the index arithmetic of a column block's partial
/// results, per work-item.
const COL_PARTIALS: f64 = 4.0;

/// Work-items a GPU keeps resident, in units of the cost model's `lanes` (an H200: 132 SMs ×
/// 2048): below it, a column block's loop of dependent loads leaves memory latency uncovered.
/// Measured on an H200 (gemv T, 8192²): 32K work-items 0.259 ms, 65K 0.142, 131K 0.104 (with
/// the second kernel), 262K 0.080, 524K 0.083; the square root of the shortfall follows that.
const COL_RESIDENT_LANES: f64 = 8.0;

impl Lowerer<'_> {
    /// `colreduce bc r g (λc. B[reduce f z (map h D)]) xs` (see `egraph::ColReduceRule`), `D`
    /// a view of the column `c` (no computation; `map h` may be absent). For `g = 1`:
    /// `join (mapWrg0 (λblk. join (mapWrg1 (λb.
    ///    let parts = toLocal (mapLcl0 (λc. lets of B (mapLcl1 (λch. reduceSeq (λa y. f a (h y))
    ///      z ch) (transpose (split r D)))) b) in
    ///    toGlobal (mapLcl0 (λq. let c = get 0 q in join (mapLcl1 (λp. B[reduce f z p])
    ///      (split r (join (get 1 q))))) (zip b parts)))
    ///  (split bc blk))) (split bc xs))`:
    /// a work-group of `bc × r` work-items per block of `bc` columns (`mapWrg1` over one chunk
    /// gives `mapLcl1` its dimension); work-item `(j, i)` reduces elements `i, i + r, …` of
    /// column `j` (a row of the matrix is read by consecutive work-items), the partial results
    /// meet in local memory, and work-item `(j, 0)` reduces its column's `r` of them and
    /// computes the rest of `B` (an epilogue such as gemv's `alpha`/`beta` runs once per
    /// column). For `g > 1`, `g` work-groups share a block of columns, work-group `k` taking
    /// the rows `k, k + g, …` (`at k (transpose (split g D))`, `k` from `generate`), so that
    /// enough work-items run to cover memory latency; each writes its `bc` partial results,
    /// and a second kernel, `mapGlb (λq. let c = get 0 q in B[reduce f z (get 1 q)]) (zip xs
    /// (transpose partials))`, reduces the `g` of each column. Anything else, the plain map.
    /// `joined`: the value is `join` of the map (applied inside the second kernel's `let`,
    /// where a `join` of the `let` would be a copy kernel of its own).
    fn host_colreduce(&mut self, t: &Rc<Term>, (bc, r, g): (i64, i64, i64), joined: bool) -> Out {
        let plain = |me: &mut Self| {
            let map = as_map(t);
            if joined {
                let len = map.len.as_ref().zip(map.inner.as_ref()).map(|(a, b)| a.mul(b));
                me.host(&Term::new(TOp::Join, vec![map], len, None))
            } else {
                me.host(&map)
            }
        };
        let (f, xs) = (&t.kids[3], &t.kids[4]);
        let body = &f.kids[1];
        let split = (f.op == TOp::Lam && t.inner.is_some() && reductions(body) == 1)
            .then(|| reduction_path(body))
            .flatten();
        let Some(path) = split else {
            return plain(self);
        };
        // every work-item of a column evaluates the `let`s on the way to the reduction, and
        // the second phase again: only views may be bound there (a computed array would be
        // computed by all of them, into memory of its own)
        let mut red = body.clone();
        let mut views = true;
        for &i in &path {
            views &= !(red.op == TOp::Let && i == 2 && self.computes(&red.kids[1]));
            red = red.kids[i].clone();
        }
        if red.op != TOp::Reduce || !views {
            return plain(self);
        }
        let (fr, z, x) = (&red.kids[0], &red.kids[1], &red.kids[2]);
        // the column's data, and the element function fused into the chunks' loop
        let (data, h) = match &x.op {
            TOp::Map if matches!(x.kids[0].op, TOp::Sym(_)) => (&x.kids[1], Some(&x.kids[0])),
            _ => (x, None),
        };
        if self.computes(data) {
            return plain(self);
        }
        let n = self.len(xs);
        let c = Self::sym_name(&f.kids[0]);
        let (xt, xc, bind) = self.kernel_arg(xs);
        let [gb, blk, b, parts, q, ch, p, i, partials] =
            ["gb", "blk", "b", "parts", "q", "ch", "p", "i", "partials"].map(|n| self.name(n));
        // a term `reduce f z p` over the `len` partial results bound to `p`
        let reduce_p = |len: i64| {
            let pt = Term::new(
                TOp::Sym(Symbol::from(p.as_str())),
                vec![],
                Some(arith::ArithExpr::cst(len)),
                None,
            );
            Term::new(TOp::Reduce, vec![fr.clone(), z.clone(), pt], red.len.clone(), None)
        };
        let gbv = (g > 1).then(|| self.b.bind(&gb));
        let blkv = self.b.bind(&blk);
        let bv = self.b.bind(&b);
        // phase 1: the chunks of each column
        let cv = self.b.bind(&c);
        let red_parts = ColRed { f: fr, z, h, data };
        let (chunks, c1) = self.col_chunks(body, &path, &red_parts, r, gbv.map(|v| (g, v)), &ch);
        self.b.unbind(cv);
        let chunks_fn = self.b.lambda(vec![cv], chunks);
        let be = self.b.var(bv);
        let phase1 = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![chunks_fn, be]);
        let phase1 = self.b.to(AddressSpace::Local, phase1);
        let partsv = self.b.bind(&parts);
        // phase 2: per column, its `r` partial results (and, for one group per column block,
        // the rest of the body), by the first row of work-items
        let qv = self.b.bind(&q);
        let cv = (g == 1).then(|| self.b.bind(&c));
        let pv = self.b.bind(&p);
        let (e2, c2) = match g {
            1 => self.seq(&replace_at(body, &path, &reduce_p(r))),
            _ => self.seq(&reduce_p(r)),
        };
        self.b.unbind(pv);
        let p_fn = self.b.lambda(vec![pv], e2);
        let col_parts = if g == 1 { self.get(1, qv) } else { self.b.var(qv) };
        let col_parts = self.b.prim(Prim::Join, vec![col_parts]);
        let col_parts = self.b.prim(Prim::Split(arith::ArithExpr::cst(r)), vec![col_parts]);
        let one = self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![p_fn, col_parts]);
        let mut one = self.b.prim(Prim::Join, vec![one]);
        if let Some(cv) = cv {
            self.b.unbind(cv);
            let g0 = self.get(0, qv);
            one = self.b.let_(cv, g0, one);
        }
        self.b.unbind(qv);
        let q_fn = self.b.lambda(vec![qv], one);
        let pe = self.b.var(partsv);
        let pairs = if g == 1 {
            let be = self.b.var(bv);
            self.b.prim(Prim::Zip, vec![be, pe])
        } else {
            pe
        };
        let phase2 = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![q_fn, pairs]);
        let phase2 = self.b.to(AddressSpace::Global, phase2);
        self.b.unbind(partsv);
        let group = self.b.let_(partsv, phase1, phase2);
        self.b.unbind(bv);
        let group_fn = self.b.lambda(vec![bv], group);
        let blocks = self.b.prim(Prim::Split(arith::ArithExpr::cst(bc)), vec![xt]);
        let threads = n * r as f64 * g as f64;
        let resident = COL_RESIDENT_LANES * self.lanes;
        let latency = (resident / threads).max(1.0).sqrt();
        let under = if bc * r < 64 { 1.25 } else { 1.0 };
        // each column block writes its `bc` results (partial results for `g > 1`) once
        let k1 = (threads / self.lanes).ceil() * under * latency * (c1 + c2 + COL_PARTIALS) + n * g as f64 * MEM;
        let groups = (n / bc as f64).ceil();
        let Some(gbv) = gbv else {
            let blke = self.b.var(blkv);
            let single = self.b.prim(Prim::Split(arith::ArithExpr::cst(bc)), vec![blke]);
            let inner = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![group_fn, single]);
            let inner = self.b.prim(Prim::Join, vec![inner]);
            self.b.unbind(blkv);
            let blk_fn = self.b.lambda(vec![blkv], inner);
            let groups_e = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![blk_fn, blocks]);
            let mut e = self.b.prim(Prim::Join, vec![groups_e]);
            if joined {
                e = self.b.prim(Prim::Join, vec![e]);
            }
            self.notes.push(format!(
                "column blocks: mapWrg {groups} groups of {bc} columns × {r} row chunks"
            ));
            return (self.wrap(bind, e), xc + k1 + LAUNCH);
        };
        // g > 1: the work-groups of a row of blocks write one row of partial results each
        self.b.unbind(blkv);
        let row = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![group_fn, blocks]);
        let row = self.b.prim(Prim::Join, vec![row]);
        let row = self.b.prim(Prim::Join, vec![row]);
        self.b.unbind(gbv);
        let gb_fn = self.b.lambda(vec![gbv], row);
        let iv = self.b.bind(&i);
        let ie = self.b.var(iv);
        self.b.unbind(iv);
        let id = self.b.lambda(vec![iv], ie);
        let ks = self.b.prim(Prim::Generate(arith::ArithExpr::cst(g)), vec![id]);
        let k1e = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![gb_fn, ks]);
        // the second kernel: the `g` partial results of each column and the rest of the body
        let partialsv = self.b.bind(&partials);
        let qv = self.b.bind(&q);
        let cv = self.b.bind(&c);
        let pv = self.b.bind(&p);
        let (e3, c3) = self.seq(&replace_at(body, &path, &reduce_p(g)));
        self.b.unbind(pv);
        let g1 = self.get(1, qv);
        let e3 = self.b.let_(pv, g1, e3);
        self.b.unbind(cv);
        let g0 = self.get(0, qv);
        let e3 = self.b.let_(cv, g0, e3);
        self.b.unbind(qv);
        let q_fn = self.b.lambda(vec![qv], e3);
        let cols = match &bind {
            Some((v, _)) => self.b.var(*v),
            None => self.seq(xs).0,
        };
        let pe = self.b.var(partialsv);
        let per_col = self.b.prim(Prim::Transpose, vec![pe]);
        let pairs = self.b.prim(Prim::Zip, vec![cols, per_col]);
        let k2e = self.b.prim(Prim::Map(MapKind::Glb(0)), vec![q_fn, pairs]);
        let mut k2e = self.b.to(AddressSpace::Global, k2e);
        if joined {
            k2e = self.b.prim(Prim::Join, vec![k2e]);
        }
        self.b.unbind(partialsv);
        let e = self.b.let_(partialsv, k1e, k2e);
        self.notes.push(format!(
            "column blocks: mapWrg1×mapWrg0 {g}×{groups} groups of {bc} columns × {r} row chunks"
        ));
        self.notes.push("separate kernel for an intermediate".into());
        self.notes.push(format!("mapGlb {n}"));
        let k2 = (n / self.lanes).ceil() * c3 + n * (g + 1) as f64 * MEM + LAUNCH;
        (self.wrap(bind, e), xc + k1 + k2 + LAUNCH)
    }

    /// Phase 1 of [`Self::host_colreduce`] for the column bound by the caller: the `let`s of
    /// `t` on the way to its reduction (at `path`), then `mapLcl1` over the `r` strided chunks
    /// of the reduction's data (of its rows `k, k + g, …` when `rows` is `(g, k)`), each
    /// reduced by one work-item.
    fn col_chunks(
        &mut self,
        t: &Rc<Term>,
        path: &[usize],
        red: &ColRed,
        r: i64,
        rows: Option<(i64, VarId)>,
        ch: &str,
    ) -> Out {
        let &ColRed { f, z, h, data } = red;
        let Some((&i, rest)) = path.split_first() else {
            let per = r * rows.map_or(1, |(g, _)| g);
            let chunk_len = data
                .len
                .as_ref()
                .map(|l| l.div_assume_exact(&arith::ArithExpr::cst(per)));
            let chunk = Term::new(TOp::Sym(Symbol::from(ch)), vec![], chunk_len.clone(), None);
            let elems = match h {
                Some(h) => Term::new(TOp::Map, vec![h.clone(), chunk], chunk_len, None),
                None => chunk,
            };
            let red = Term::new(
                TOp::Reduce,
                vec![f.clone(), z.clone(), elems],
                Some(arith::ArithExpr::cst(1)),
                None,
            );
            let (mut d, dc) = self.seq(data);
            if let Some((g, k)) = rows {
                let split = self.b.prim(Prim::Split(arith::ArithExpr::cst(g)), vec![d]);
                let strided = self.b.prim(Prim::Transpose, vec![split]);
                let ke = self.b.var(k);
                d = self.b.op(Op::At, vec![ke, strided]);
            }
            let chv = self.b.bind(ch);
            let (rd, rc) = self.seq(&red);
            self.b.unbind(chv);
            let red_fn = self.b.lambda(vec![chv], rd);
            let split = self.b.prim(Prim::Split(arith::ArithExpr::cst(r)), vec![d]);
            let strided = self.b.prim(Prim::Transpose, vec![split]);
            return (self.b.prim(Prim::Map(MapKind::Lcl(1)), vec![red_fn, strided]), dc + rc);
        };
        match t.op {
            // the value the body binds is needed on the way to the reduction
            TOp::Let if i == 2 => {
                let (v, vc) = self.seq(&t.kids[1]);
                let x = self.b.bind(&Self::sym_name(&t.kids[0]));
                let (b, bc) = self.col_chunks(&t.kids[2], rest, red, r, rows, ch);
                self.b.unbind(x);
                (self.b.let_(x, v, b), vc + bc)
            }
            // what the body does with the reduction's result is phase 2's
            _ => self.col_chunks(&t.kids[i], rest, red, r, rows, ch),
        }
    }
}

/// Per-group cost of the one-launch whole-array reduction beyond its tree: the groups' tickets
/// are atomics on one global word, which the device serializes (a thousand of them about a
/// quarter of a launch).
const GRID_TICKET: f64 = 0.5;

impl Lowerer<'_> {
    /// `gridreduce g s f z xs` (see `egraph::GridPartial`):
    /// `let parts = join (mapWrg (λgrp. tree (join (transpose grp)))
    ///                     (split #s (transpose (split #(g·s) (pad #0 #r z xs)))))
    ///  in join (mapWrg (λc. tree c) (split #g' (pad #0 #(g'-g) z parts)))`
    /// with `r` padding `xs` with the neutral `z` to a multiple of `g·s`: work-item `l` of group
    /// `w` reduces `xs[w·s + l], xs[w·s + l + g·s], …` (every step of every group reads one
    /// contiguous run of `g·s` elements), each group combines its `s` results by the work-group
    /// tree, and one group combines the `g` results, padded with `z` to a multiple of `s` so
    /// that all its work-items read a few of them at once. The code generator runs that last
    /// group inside the first launch, in whichever group finishes last (`codegen_opencl`'s
    /// `gen/reduce.rs`).
    fn host_grid(&mut self, g: i64, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let lanes = g >> crate::egraph::GRID_LANES_SHIFT;
        if lanes > 1 {
            return self.host_grid_lanes(g & ((1 << crate::egraph::GRID_LANES_SHIFT) - 1), s, lanes, f, z, x);
        }
        let gs = g * s;
        let Some(len) = x.len.clone() else {
            self.b
                .broken
                .get_or_insert_with(|| "a grid reduction of unknown length".into());
            return (self.b.int(0), 0.0);
        };
        let rows_len = len.add(&A::cst(gs - 1)).div(&A::cst(gs));
        // xs padded by the neutral element up to the next multiple of g·s (nothing when it is one)
        let pad = A::cst(gs - 1).sub(&len.sub(&A::cst(1)).rem(&A::cst(gs)));
        // a dot product `map h (zip p q)`: p and q padded (with z = 0, where h is 0), h fused
        // into the work-items' loop; any other `map h ys`: the lanes past `ys` marked, h
        // applied only to the elements read (`Lowerer::guarded_elems`)
        let guarded = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(h))) if !self.zero_product_dot(h, f, &x.kids[1]) => Some(*h),
            _ => None,
        };
        let (h, padded, xc, bind) = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(_))) if guarded.is_some() => {
                (None, self.guarded_elems(&x.kids[1], &pad), 0.0, None)
            }
            (TOp::Map, Some(TOp::Sym(_))) => {
                let mut comps = vec![];
                for c in &x.kids[1].kids {
                    let (ct, _) = self.seq(c);
                    let (zl, _) = self.seq(z);
                    comps.push(self.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![zl, ct]));
                }
                (Some(x.kids[0].clone()), self.b.prim(Prim::Zip, comps), 0.0, None)
            }
            _ => {
                let (xt, xc, bind) = self.kernel_arg(x);
                let (zl, _) = self.seq(z);
                (None, self.b.prim(Prim::Pad(A::cst(0), pad), vec![zl, xt]), xc, bind)
            }
        };
        let split = self.b.prim(Prim::Split(A::cst(gs)), vec![padded]);
        let rows = self.b.prim(Prim::Transpose, vec![split]);
        let groups = self.b.prim(Prim::Split(A::cst(s)), vec![rows]);
        // a group's rows, as the flat chunk the work-group tree reads back as rows
        let grp = self.name("grp");
        let grp_t = Term::new(
            TOp::Sym(Symbol::from(grp.as_str())),
            vec![],
            Some(A::cst(s)),
            Some(rows_len.clone()),
        );
        let chunk = Term::new(
            TOp::Join,
            vec![Term::new(
                TOp::Transpose,
                vec![grp_t],
                Some(rows_len.clone()),
                Some(A::cst(s)),
            )],
            Some(rows_len.mul(&A::cst(s))),
            None,
        );
        let chunk = match h {
            Some(h) => Term::new(TOp::Map, vec![h, chunk], Some(rows_len.mul(&A::cst(s))), None),
            None => chunk,
        };
        let gv = self.b.bind(&grp);
        let (tree, tc) = self.wg_tree_by(s, f, z, &chunk, guarded.as_ref());
        let first = self.group_result(tree);
        self.b.unbind(gv);
        let first_fn = self.b.lambda(vec![gv], first);
        let first = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![first_fn, groups]);
        let first = self.b.prim(Prim::Join, vec![first]);
        self.grid_finish(g, s, f, z, (first, tc), (xc, bind))
    }

    /// The rest of `host_grid` once its first stage (`first`, one result per group, at `tc` a
    /// work-item) is built: the one-group stage over the groups' results.
    fn grid_finish(
        &mut self,
        g: i64,
        s: i64,
        f: &Rc<Term>,
        z: &Rc<Term>,
        (first, tc): Out,
        (xc, bind): (f64, Option<(VarId, ExprId)>),
    ) -> Out {
        use arith::ArithExpr as A;
        let gs = g * s;
        // the groups' results, padded with `z` to a multiple of `s`, combined by one group of `s`
        let whole = (g + s - 1) / s * s;
        let parts = self.name("parts");
        let pv = self.b.bind(&parts);
        let c = self.name("c");
        let c_t = Term::new(TOp::Sym(Symbol::from(c.as_str())), vec![], Some(A::cst(whole)), None);
        let cv = self.b.bind(&c);
        let (tree2, tc2) = self.wg_tree(s, f, z, &c_t);
        let last = self.group_result(tree2);
        self.b.unbind(cv);
        let last_fn = self.b.lambda(vec![cv], last);
        let mut pe = self.b.var(pv);
        if whole > g {
            let (zl, _) = self.seq(z);
            pe = self.b.prim(Prim::Pad(A::cst(0), A::cst(whole - g)), vec![zl, pe]);
        }
        let one = self.b.prim(Prim::Split(A::cst(whole)), vec![pe]);
        let last = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![last_fn, one]);
        let last = self.b.prim(Prim::Join, vec![last]);
        self.b.unbind(pv);
        let e = self.b.let_(pv, first, last);
        self.notes.push(format!(
            "one launch: {g} groups × work-group reduction by {s} reading a grid apart, the last group combining their results"
        ));
        let threads = gs as f64;
        let cost = (threads / self.lanes).ceil() * tc + g as f64 * (MEM + GRID_TICKET) + tc2;
        (self.wrap(bind, e), xc + cost + LAUNCH)
    }

    /// A work-group's value in local memory written to global memory by a `mapLcl`.
    fn group_result(&mut self, e: ExprId) -> ExprId {
        let x = self.b.bind("x");
        let xe = self.b.var(x);
        self.b.unbind(x);
        let id = self.b.lambda(vec![x], xe);
        let copy = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![id, e]);
        self.b.to(AddressSpace::Global, copy)
    }
}

/// `rblock c r g x ys` as the product it stands for: `map (λr. join (map g ys)) x`.
fn rblock_as_map(t: &Rc<Term>) -> Rc<Term> {
    let (r, g, x, ys) = (&t.kids[1], &t.kids[2], &t.kids[3], &t.kids[4]);
    let row = Term::new(TOp::Map, vec![g.clone(), ys.clone()], ys.len.clone(), None);
    let row = Term::new(TOp::Join, vec![row], ys.len.clone(), None);
    let f = Term::new(TOp::Lam, vec![r.clone(), row], None, None);
    Term::new(TOp::Map, vec![f, x.clone()], t.len.clone(), t.inner.clone())
}

impl Lowerer<'_> {
    /// The parts of a dot product `λc. reduce f z (map h (zip r c))` (or `zip c r`): `f`, `z`,
    /// `h`, and whether `h` takes the column's element first.
    fn dot_parts(&self, g: &Rc<Term>, r: &str) -> Option<(Symbol, Symbol, Symbol, bool)> {
        let (c, red) = (g.kids.first()?, g.kids.get(1)?);
        if g.op != TOp::Lam || red.op != TOp::Reduce || red.kids[2].op != TOp::Map {
            return None;
        }
        let (f, z, m) = (&red.kids[0], &red.kids[1], &red.kids[2]);
        let (h, zipped) = (&m.kids[0], &m.kids[1]);
        let name_of = |t: &Rc<Term>| match &t.op {
            TOp::Sym(s) => Some(s.to_string()),
            _ => None,
        };
        let (TOp::Sym(fs), TOp::Sym(zs), TOp::Sym(hs), TOp::Other(zip)) = (&f.op, &z.op, &h.op, &zipped.op) else {
            return None;
        };
        if self.leaf_text(zip) != "zip" || zipped.kids.len() != 2 {
            return None;
        }
        let (a, b) = (name_of(&zipped.kids[0])?, name_of(&zipped.kids[1])?);
        let c = name_of(c)?;
        let swapped = match (a == r, b == c) {
            (true, true) => false,
            _ if a == c && b == r => true,
            _ => return None,
        };
        Some((*fs, *zs, *hs, swapped))
    }

    /// A tile copied into local memory by a work-group of `wi1 × wi0` work-items, each moving
    /// `s = |tile| / (wi1·wi0)` elements: step `t` of work-item `(a, b)` moves element
    /// `t·wi1·wi0 + a·wi0 + b` of the tile read row after row, so consecutive work-items read and
    /// write consecutive addresses, and each work-item's `s` loads are independent (unrolled, all
    /// in flight at once). The local copy is one flat array (no padding: its reads are along
    /// rows or broadcasts), read as vectors of `VEC` floats:
    /// `split (row/VEC) (asVector VEC (toLocal (join (transpose (join (mapLcl1 (λr. mapLcl0 (λe.
    /// mapSeqUnroll (λx. x) e) r) (split wi0 (transpose (split (wi1·wi0) (join tile))))))))))`.
    /// Without `vec` the copy is scalar (see `vector_copy` for when it is not).
    /// When `across`, the tile's columns are what lies contiguous in global memory (a tile of
    /// `transpose m`, rows of `m`): the work-items then walk `transpose tile` row after row and
    /// transpose on the way into local memory, `join (transpose (split (|tile| / row) copied))`,
    /// so that consecutive work-items read consecutive addresses (the local stores, a row of
    /// the tile apart, then share banks; `mm_nt` took 4.98 ms on the H200 at 4096³ so, 5.92
    /// copied along the tile's rows: `bench/results/runs/nvidia-h200-2026-11-24-s8-mm-speed2.md`).
    ///
    /// With `vec` the work-items move `float4`s instead (`VEC` adjacent elements of a row of
    /// the tile as read): `asVector VEC (join tile)` in place of `join tile`, each work-item's
    /// vectors stored by `split VEC (asScalar (mapSeqUnroll (λx. x) e))` (vector stores need
    /// `asScalar` right around the computation), and `join (join (transpose …))` back over the
    /// vectors' lanes. Step `t` of work-item `(a, b)` moves elements `VEC·(t·wi1·wi0 + a·wi0 +
    /// b) + q`, `q < VEC`: one vector load from global memory (aligned where the sizes are
    /// built into the kernel, `codegen_opencl` `Gen::aligned_vectors`) and, where the tile is
    /// not transposed on its way, one vector store into local memory, for `VEC` scalar ones
    /// each (a transposing copy stores the lanes one by one). On the H200 at 4096³ the
    /// 64×128/8×8/8 product took 2.971 ms so against 3.040 copied element by element, `mm_tn`
    /// (both tiles stored as vectors) 2.916 against 3.026, and the tuned 128×128/8×8/16 2.908
    /// (`bench/results/runs/nvidia-h200-2026-11-24-s10-mm-speed4.md`).
    #[allow(clippy::too_many_arguments)]
    fn flat_local_copy(
        &mut self,
        tile: ExprId,
        rows: i64,
        row: i64,
        wi1: i64,
        wi0: i64,
        across: bool,
        vec: bool,
    ) -> ExprId {
        let cst = arith::ArithExpr::cst;
        let tile = if across {
            self.b.prim(Prim::Transpose, vec![tile])
        } else {
            tile
        };
        let flat = self.b.prim(Prim::Join, vec![tile]);
        let flat = if vec {
            self.b.prim(Prim::AsVector(VEC as u8), vec![flat])
        } else {
            flat
        };
        let steps = self.b.prim(Prim::Split(cst(wi1 * wi0)), vec![flat]);
        let per_item = self.b.prim(Prim::Transpose, vec![steps]);
        let per_item = self.b.prim(Prim::Split(cst(wi0)), vec![per_item]);
        let copied = self.map_with(MapKind::Lcl(1), "cr", per_item, |l, rv| {
            let r = l.b.var(rv);
            l.map_with(MapKind::Lcl(0), "ce", r, |l, ev| {
                let e = l.b.var(ev);
                let id = l.id_fn();
                let moved = l.b.prim(Prim::Map(MapKind::SeqUnroll), vec![id, e]);
                // vectors are stored only by the computation that makes them (`asScalar`
                // directly around it); a work-item's share as rows of a vector's scalars
                if vec {
                    let scalars = l.b.prim(Prim::AsScalar, vec![moved]);
                    l.b.prim(Prim::Split(cst(VEC)), vec![scalars])
                } else {
                    moved
                }
            })
        });
        // [wi1][wi0][s] (or [wi1][wi0][s/VEC][VEC]) back to the tile's order
        let back = self.b.prim(Prim::Join, vec![copied]);
        let back = self.b.prim(Prim::Transpose, vec![back]);
        let back = self.b.prim(Prim::Join, vec![back]);
        let back = if vec { self.b.prim(Prim::Join, vec![back]) } else { back };
        let back = if across {
            let cols = self.b.prim(Prim::Split(cst(rows)), vec![back]);
            let t = self.b.prim(Prim::Transpose, vec![cols]);
            self.b.prim(Prim::Join, vec![t])
        } else {
            back
        };
        // staged as rows, so that code generation may pad them (`codegen_opencl`
        // `gen_pipelined`): a copy down the columns then stores into distinct banks
        let back = self.b.prim(Prim::Split(cst(row)), vec![back]);
        let staged = self.b.to(AddressSpace::Local, back);
        let staged = self.b.prim(Prim::Join, vec![staged]);
        let vectors = self.b.prim(Prim::AsVector(VEC as u8), vec![staged]);
        self.b.prim(Prim::Split(cst(row / VEC)), vec![vectors])
    }

    /// Whether a tile of `elems` elements, read in rows of `run` elements of its matrix
    /// (global rows `global` long), is copied by a group of `group` work-items as vectors
    /// (`flat_local_copy`): each work-item moves whole vectors, a row of the tile holds whole
    /// vectors, and the matrix's rows are known to be a multiple of `VEC` long, so that each
    /// vector is one aligned load. Where the length is not known (a kernel for any size), the
    /// copy stays scalar: `vload4` at offsets not known to be aligned is four loads on
    /// NVIDIA's compiler, and the product took 5.39 ms at 4096³ on the H200 copied so, 4.24 by
    /// elements (`bench/results/mm-speed-nvidia-h200-2026-11-24.md`).
    fn vector_copy(&self, global: Option<&arith::ArithExpr>, run: i64, elems: i64, group: i64) -> bool {
        let known = global
            .and_then(|g| crate::egraph::estimate(g, self.sizes, 0))
            .is_some_and(|g| g > 0 && g % VEC == 0);
        known && run % VEC == 0 && elems % (VEC * group) == 0
    }

    /// Whether a register-blocked product copies the tiles of `x` and of `ys` as vectors
    /// (`vector_copy`), for its lowering (`host_rblock`) and its cost (`rblock_cost`).
    fn rblock_tile_vectors(&self, rb: crate::egraph::RegBlockSizes, x: &Term, ys: &Term) -> (bool, bool) {
        // a tile lies along its rows in global memory unless its matrix is a `transpose`
        // (rows of `x` are rows of the data; the tile of `ys` is transposed once more)
        let a_across = self.is_transpose(x);
        let b_across = !self.is_transpose(ys);
        // rows of the matrices in global memory: x's are K long, or M where x is a transpose;
        // ys's (columns of the product) N long where ys is a transpose, else K
        let a_run = if a_across { x.len.as_ref() } else { x.inner.as_ref() };
        let b_run = if b_across { ys.inner.as_ref() } else { ys.len.as_ref() };
        let group = rb.items();
        // the tile of x as copied: [tm][tk] along K, [tk][tm] across
        let a_vec = self.vector_copy(a_run, if a_across { rb.tm } else { rb.tk }, rb.tm * rb.tk, group);
        let b_vec = self.vector_copy(b_run, if b_across { rb.tk } else { rb.tn }, rb.tn * rb.tk, group);
        (a_vec, b_vec)
    }

    /// `toPrivate (mapSeqUnroll (λx. x) e)`: values copied into registers.
    fn private_copy(&mut self, e: ExprId) -> ExprId {
        let id = self.id_fn();
        let copy = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![id, e]);
        self.b.to(AddressSpace::Private, copy)
    }

    /// `λx. x`.
    fn id_fn(&mut self) -> ExprId {
        let x = self.name("x");
        let xv = self.b.bind(&x);
        let xe = self.b.var(xv);
        self.b.unbind(xv);
        self.b.lambda(vec![xv], xe)
    }

    /// `map kind (λv. body v) e` with `body` building the function's body from its parameter.
    fn map_with(
        &mut self,
        kind: MapKind,
        hint: &str,
        e: ExprId,
        body: impl FnOnce(&mut Self, VarId) -> ExprId,
    ) -> ExprId {
        let n = self.name(hint);
        let v = self.b.bind(&n);
        let inner = body(self, v);
        self.b.unbind(v);
        let f = self.b.lambda(vec![v], inner);
        self.b.prim(Prim::Map(kind), vec![f, e])
    }

    /// The rank-1 update of a register block from one row of `x`'s scalars (a vector of `VEC`
    /// values of `x` per row, one of them used):
    /// `λc kq. let bp = toPrivate (copy (get 1 kq)) in mapSeqUnroll (λcr. mapSeqUnroll (λp. f
    /// (get 0 p) (h (get 1 cr, get 1 p))) (zip (get 0 cr) (asScalar bp))) (zip c (get 0 kq))`.
    fn rblock_rank1(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
        let (cn, kqn, bpn) = (self.name("c"), self.name("kq"), self.name("bp"));
        let cv = self.b.bind(&cn);
        let kqv = self.b.bind(&kqn);
        let b_part = self.get(1, kqv);
        let bp_val = self.private_copy(b_part);
        let bpv = self.b.bind(&bpn);
        let ce = self.b.var(cv);
        let a_row = self.get(0, kqv);
        let rows_of_c = self.b.prim(Prim::Zip, vec![ce, a_row]);
        let update = self.rblock_update(rows_of_c, bpv, fs, hs, swapped);
        self.b.unbind(bpv);
        let update = self.b.let_(bpv, bp_val, update);
        self.b.unbind(kqv);
        self.b.unbind(cv);
        self.b.lambda(vec![cv, kqv], update)
    }

    /// `mapSeqUnroll (λcr. mapSeqUnroll (λp. f (get 0 p) (h (get 1 cr, get 1 p))) (zip (get 0
    /// cr) (asScalar bp))) rows`, `rows` the block's rows zipped with their values of `x`.
    fn rblock_update(&mut self, rows: ExprId, bpv: VarId, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
        self.map_with(MapKind::SeqUnroll, "cr", rows, |l, crv| {
            let row = l.get(0, crv);
            let bpe = l.b.var(bpv);
            let bs = l.b.prim(Prim::AsScalar, vec![bpe]);
            let elems = l.b.prim(Prim::Zip, vec![row, bs]);
            l.map_with(MapKind::SeqUnroll, "p", elems, |l, pv| {
                let s = l.get(0, pv);
                let (av, bv) = (l.get(1, crv), l.get(1, pv));
                let pair = if swapped { vec![bv, av] } else { vec![av, bv] };
                let pair = l.b.op(Op::Tuple, pair);
                let prod = l.call(hs, &[Arg::Expr(pair)]);
                l.call(fs, &[Arg::Expr(s), Arg::Expr(prod)])
            })
        })
    }

    /// `VEC` rank-1 updates from the `rm` vectors of `x` (along K) read at once:
    /// `λc kp. let ap = toPrivate (copy (get 0 kp)) in join (reduceSeqUnroll rank1 c (zip
    /// (transpose (split VEC (asScalar ap))) (get 1 kp)))`.
    fn rblock_rank_vec(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
        let cst = arith::ArithExpr::cst;
        let rank1 = self.rblock_rank1(fs, hs, swapped);
        let (cn, kpn, apn) = (self.name("c"), self.name("kp"), self.name("ap"));
        let cv = self.b.bind(&cn);
        let kpv = self.b.bind(&kpn);
        let a_part = self.get(0, kpv);
        let ap_val = self.private_copy(a_part);
        let apv = self.b.bind(&apn);
        let ape = self.b.var(apv);
        let a_scalars = self.b.prim(Prim::AsScalar, vec![ape]);
        let a_by_k = self.b.prim(Prim::Split(cst(VEC)), vec![a_scalars]);
        let a_by_k = self.b.prim(Prim::Transpose, vec![a_by_k]);
        let b_by_k = self.get(1, kpv);
        let ks = self.b.prim(Prim::Zip, vec![a_by_k, b_by_k]);
        let ce = self.b.var(cv);
        let red = self.b.prim(Prim::Reduce(ReduceKind::SeqUnroll), vec![rank1, ce, ks]);
        let red = self.b.prim(Prim::Join, vec![red]);
        self.b.unbind(apv);
        let red = self.b.let_(apv, ap_val, red);
        self.b.unbind(kpv);
        self.b.unbind(cv);
        self.b.lambda(vec![cv, kpv], red)
    }

    /// One step of K from a K-major tile of `x`: the `rm / VEC` vectors of `x` (down a column
    /// of its tile) and the `rn / VEC` of `ys` read once each, then the rank-1 update:
    /// `λc kq. let ap = toPrivate (copy (get 0 kq)) in let bp = toPrivate (copy (get 1 kq)) in
    /// mapSeqUnroll (λcr. …) (zip c (asScalar ap))`.
    fn rblock_rank1_kmajor(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
        let (cn, kqn, apn, bpn) = (self.name("c"), self.name("kq"), self.name("ap"), self.name("bp"));
        let cv = self.b.bind(&cn);
        let kqv = self.b.bind(&kqn);
        let a_part = self.get(0, kqv);
        let ap_val = self.private_copy(a_part);
        let apv = self.b.bind(&apn);
        let b_part = self.get(1, kqv);
        let bp_val = self.private_copy(b_part);
        let bpv = self.b.bind(&bpn);
        let ce = self.b.var(cv);
        let ape = self.b.var(apv);
        let a_scalars = self.b.prim(Prim::AsScalar, vec![ape]);
        let rows_of_c = self.b.prim(Prim::Zip, vec![ce, a_scalars]);
        let update = self.rblock_update(rows_of_c, bpv, fs, hs, swapped);
        self.b.unbind(bpv);
        let update = self.b.let_(bpv, bp_val, update);
        self.b.unbind(apv);
        let update = self.b.let_(apv, ap_val, update);
        self.b.unbind(kqv);
        self.b.unbind(cv);
        self.b.lambda(vec![cv, kqv], update)
    }

    /// `rblock c r g x ys` (see `egraph::RegBlock`), as `bench/mm_regblock.lisp` is written,
    /// with every read of local memory a vector of `VEC` floats:
    /// `join (mapWrg1 (λrows. map (λz. join z) (transpose (mapWrg0 (λcols. tile (join
    /// (reduceSeq step init (zip (transpose (map (split tk) rows)) (transpose (map (split tk)
    /// cols)))))) (split tn ys)))) (split tm x))`, where `init` is zeros made by
    /// `mapLcl1 (λ. mapLcl0 …)` one `rm × rn` block per work-item, and `step` copies the tile of
    /// `x` and the tile of `ys` (transposed: along the rows of `m` when `ys = transpose m`)
    /// into local memory (`flat_local_copy`), then updates each work-item's block
    /// with `tk` rank-1 updates. Work-item `(i, j)` owns rows `i, wi1 + i, …` of the tile and
    /// the columns `VEC·j, …, VEC·j + VEC - 1` of each of its `rn / VEC` column groups of
    /// `VEC·wi0`: per `VEC` steps of K it reads each of its `rm` rows of `x`'s tile as one
    /// vector (`VEC` consecutive elements of K; the work-items of a row read the same
    /// address, a broadcast), and per step `rn / VEC` vectors of `ys`'s tile (the work-items of
    /// a row read consecutive vectors, distinct banks), so that local memory, which a rank-1
    /// update of scalars reads once per two multiply-adds, stops bounding the product; its
    /// writes of the result are runs of `VEC` per work-item, consecutive across work-items.
    /// When `a_kmajor`, `x`'s tile is stored K-major instead and read as `ys`'s is: work-item
    /// `(i, j)` owns rows `VEC·i, …, VEC·i + VEC - 1` of each of its `rm / VEC` row groups of
    /// `VEC·wi1`, and each step of K reads `rm / VEC` vectors down a column of the tile.
    /// Code generation keeps each block in registers (`codegen_opencl` `gen/regblock.rs`).
    fn host_rblock(&mut self, t: &Rc<Term>, rb: crate::egraph::RegBlockSizes) -> Out {
        let (r, g, x, ys) = (&t.kids[1], &t.kids[2], &t.kids[3], &t.kids[4]);
        let r_name = match &r.op {
            TOp::Sym(s) => s.to_string(),
            _ => String::new(),
        };
        let Some((fs, zs, hs, swapped)) = self.dot_parts(g, &r_name) else {
            return self.host(&rblock_as_map(t));
        };
        let (rows_n, cols_n, k_len) = (self.len(x), self.len(ys), self.eval(x.inner.as_ref()));
        let (xt, xc, xbind) = self.kernel_arg(x);
        let (yt, yc, ybind) = self.kernel_arg(ys);
        let (wi1, wi0) = (rb.tm / rb.rm, rb.tn / rb.rn);
        let cst = arith::ArithExpr::cst;
        let kmajor = a_kmajor(rb);
        let per_k = if kmajor {
            self.rblock_rank1_kmajor(&fs, &hs, swapped)
        } else {
            self.rblock_rank_vec(&fs, &hs, swapped)
        };
        // step = λacc tiles. let la = … in let lb = … in mapLcl1 (λia. mapLcl0 (λjb. join
        //   (reduceSeqUnroll per_k (get 0 jb) (zip (get 1 ia) (get 1 jb)))) (zip (get 0 ia)
        //   b_blocks)) (zip acc a_blocks)
        let (accn, tilesn, lan, lbn) = (self.name("acc"), self.name("tiles"), self.name("la"), self.name("lb"));
        let accv = self.b.bind(&accn);
        let tilesv = self.b.bind(&tilesn);
        // la : [tm][tk/VEC] vectors along K, or K-major [tk][tm/VEC] vectors down a column of
        // the tile; lb : [tk][tn/VEC] vectors along a row of `m`
        let ta = self.get(0, tilesv);
        let (a_across, b_across) = (self.is_transpose(x), !self.is_transpose(ys));
        let (a_vec, b_vec) = self.rblock_tile_vectors(rb, x, ys);
        let la_val = if kmajor {
            let ta = self.b.prim(Prim::Transpose, vec![ta]);
            self.flat_local_copy(ta, rb.tk, rb.tm, wi1, wi0, !a_across, a_vec)
        } else {
            self.flat_local_copy(ta, rb.tm, rb.tk, wi1, wi0, a_across, a_vec)
        };
        let lav = self.b.bind(&lan);
        let tb = self.get(1, tilesv);
        let tb = self.b.prim(Prim::Transpose, vec![tb]);
        let lb_val = self.flat_local_copy(tb, rb.tk, rb.tn, wi1, wi0, b_across, b_vec);
        let lbv = self.b.bind(&lbn);
        let acce = self.b.var(accv);
        let lae = self.b.var(lav);
        let a_blocks = if kmajor {
            // work-item i's vectors i, wi1 + i, … of each row of la (rows VEC·i … VEC·i + VEC - 1
            // of each of its rm / VEC row groups of VEC·wi1):
            // a_blocks = transpose (map (λrow. transpose (split wi1 row)) la) : [wi1][tk][rm/VEC]
            let a_blocks = self.map_with(MapKind::Plain, "ar", lae, |l, v| {
                let e = l.b.var(v);
                let e = l.b.prim(Prim::Split(cst(wi1)), vec![e]);
                l.b.prim(Prim::Transpose, vec![e])
            });
            self.b.prim(Prim::Transpose, vec![a_blocks])
        } else {
            // work-item i's rows i, wi1 + i, …:
            // a_blocks = map transpose (transpose (split wi1 la)) : [wi1][tk/VEC][rm]
            let a_blocks = self.b.prim(Prim::Split(cst(wi1)), vec![lae]);
            let a_blocks = self.b.prim(Prim::Transpose, vec![a_blocks]);
            self.map_with(MapKind::Plain, "ar", a_blocks, |l, v| {
                let e = l.b.var(v);
                l.b.prim(Prim::Transpose, vec![e])
            })
        };
        let acc_rows = self.b.prim(Prim::Zip, vec![acce, a_blocks]);
        let block = self.map_with(MapKind::Lcl(1), "ia", acc_rows, |l, iav| {
            let acc_row = l.get(0, iav);
            // work-item j's vectors j, wi0 + j, … of each row of lb:
            // b_blocks = map (split VEC) (transpose (map (λrow. transpose (split wi0 row)) lb))
            //   : [wi0][tk/VEC][VEC][rn/VEC] (with a K-major la, one step a row: [wi0][tk][rn/VEC])
            let lbe = l.b.var(lbv);
            let b_blocks = l.map_with(MapKind::Plain, "br", lbe, |l, v| {
                let e = l.b.var(v);
                let e = l.b.prim(Prim::Split(cst(wi0)), vec![e]);
                l.b.prim(Prim::Transpose, vec![e])
            });
            let b_blocks = l.b.prim(Prim::Transpose, vec![b_blocks]);
            let b_blocks = if kmajor { b_blocks } else { l.map_split(VEC, b_blocks) };
            let pairs = l.b.prim(Prim::Zip, vec![acc_row, b_blocks]);
            l.map_with(MapKind::Lcl(0), "jb", pairs, |l, jbv| {
                let init = l.get(0, jbv);
                let (av, bv) = (l.get(1, iav), l.get(1, jbv));
                let ks = l.b.prim(Prim::Zip, vec![av, bv]);
                let red = l.b.prim(Prim::Reduce(ReduceKind::SeqUnroll), vec![per_k, init, ks]);
                l.b.prim(Prim::Join, vec![red])
            })
        });
        self.b.unbind(lbv);
        let block = self.b.let_(lbv, lb_val, block);
        self.b.unbind(lav);
        let block = self.b.let_(lav, la_val, block);
        self.b.unbind(tilesv);
        self.b.unbind(accv);
        let step = self.b.lambda(vec![accv, tilesv], block);
        // init = mapLcl1 (λr. mapLcl0 (λblk. mapSeqUnroll (λrow. copy row) blk) r)
        //   (split wi0 (split rm (split rn (generate (tm·tn) (λi. z)))))
        let i_name = self.name("i");
        let iv = self.b.bind(&i_name);
        let zero = self.leaf(&zs);
        self.b.unbind(iv);
        let gen_fn = self.b.lambda(vec![iv], zero);
        let zeros = self.b.prim(Prim::Generate(cst(rb.tm * rb.tn)), vec![gen_fn]);
        let zeros = self.b.prim(Prim::Split(cst(rb.rn)), vec![zeros]);
        let zeros = self.b.prim(Prim::Split(cst(rb.rm)), vec![zeros]);
        let zeros = self.b.prim(Prim::Split(cst(wi0)), vec![zeros]);
        let rowe = |l: &mut Self, v: VarId| l.b.var(v);
        let init = self.map_with(MapKind::Lcl(1), "zr", zeros, |l, zrv| {
            let zr = rowe(l, zrv);
            l.map_with(MapKind::Lcl(0), "blk", zr, |l, blkv| {
                let blk = rowe(l, blkv);
                l.map_with(MapKind::SeqUnroll, "row", blk, |l, rowv| {
                    let row = rowe(l, rowv);
                    let id = l.id_fn();
                    l.b.prim(Prim::Map(MapKind::SeqUnroll), vec![id, row])
                })
            })
        });
        let (rows_n_, cols_n_) = (self.name("rows"), self.name("cols"));
        let rowsv = self.b.bind(&rows_n_);
        let colsv = self.b.bind(&cols_n_);
        let rs = self.b.var(rowsv);
        let rs = self.map_split(rb.tk, rs);
        let rs = self.b.prim(Prim::Transpose, vec![rs]);
        let cs = self.b.var(colsv);
        let cs = self.map_split(rb.tk, cs);
        let cs = self.b.prim(Prim::Transpose, vec![cs]);
        let pairs = self.b.prim(Prim::Zip, vec![rs, cs]);
        let acc = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, init, pairs]);
        let blocks = self.b.prim(Prim::Join, vec![acc]);
        // block element [i][j][r][c] is the tile's (r·wi1 + i, (c/VEC)·VEC·wi0 + VEC·j + c%VEC):
        // tile = join (transpose (map (λbr. map (λq. join (map join (transpose (map (split VEC)
        //   q)))) (transpose br)) blocks)); with a K-major la its row is (r/VEC)·VEC·wi1 + VEC·i
        //   + r%VEC, the columns' arrangement: join (map join (transpose (map (split VEC) …)))
        let tile = self.map_with(MapKind::Plain, "bl", blocks, |l, brv| {
            let br = l.b.var(brv);
            let tr = l.b.prim(Prim::Transpose, vec![br]);
            l.map_with(MapKind::Plain, "q", tr, |l, qv| {
                let q = l.b.var(qv);
                let q = l.map_split(VEC, q);
                let q = l.b.prim(Prim::Transpose, vec![q]);
                let jf = l.join_fn();
                let q = l.b.prim(Prim::Map(MapKind::Plain), vec![jf, q]);
                l.b.prim(Prim::Join, vec![q])
            })
        });
        let tile = if kmajor {
            let tile = self.map_split(VEC, tile);
            let tile = self.b.prim(Prim::Transpose, vec![tile]);
            let jf = self.join_fn();
            self.b.prim(Prim::Map(MapKind::Plain), vec![jf, tile])
        } else {
            self.b.prim(Prim::Transpose, vec![tile])
        };
        let tile = self.b.prim(Prim::Join, vec![tile]);
        self.b.unbind(colsv);
        let cols_fn = self.b.lambda(vec![colsv], tile);
        let col_tiles = self.b.prim(Prim::Split(cst(rb.tn)), vec![yt]);
        let groups = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![cols_fn, col_tiles]);
        let groups = self.b.prim(Prim::Transpose, vec![groups]);
        let jf = self.join_fn();
        let out_rows = self.b.prim(Prim::Map(MapKind::Plain), vec![jf, groups]);
        self.b.unbind(rowsv);
        let rows_fn = self.b.lambda(vec![rowsv], out_rows);
        let row_tiles = self.b.prim(Prim::Split(cst(rb.tm)), vec![xt]);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![rows_fn, row_tiles]);
        let e = self.b.prim(Prim::Join, vec![e]);
        let e = self.b.to(AddressSpace::Global, e);
        let e = self.wrap(ybind, e);
        let e = self.wrap(xbind, e);
        let copied = match (a_vec, b_vec) {
            (true, true) => ", both tiles copied as float4",
            (true, false) => ", x's tile copied as float4",
            (false, true) => ", ys's tile copied as float4",
            (false, false) => "",
        };
        self.notes.push(format!(
            "mapWrg1×mapWrg0 tiles of {}×{}, {}×{} work-items each computing a {}×{} block in registers, K in steps of {} staged in local memory, read as float{}{copied}",
            rb.tm, rb.tn, wi1, wi0, rb.rm, rb.rn, rb.tk, VEC
        ));
        let cost = self.rblock_cost(rb, rows_n * cols_n, k_len, x, ys);
        (e, xc + yc + cost)
    }
}

/// Lanes of the vectors in which a register-blocked product reads its local tiles.
const VEC: i64 = crate::egraph::RegBlockSizes::VEC;

/// Whether a register-blocked product keeps `x`'s tile K-major in local memory: each step of
/// K a work-item reads its `rm` values of `x` as `rm / VEC` vectors down a column of the tile,
/// and holds `rm` values of `x` at a time instead of `rm` vectors along K. On the H200 at
/// 4096³ the 128×128/8×8 product by steps of 8 took 3.10 ms so (its rows padded,
/// `codegen_opencl` `gen_pipelined`; 3.30 unpadded) against 3.32 with `x`'s tile row-major;
/// the 128×64/8×4/16 one, narrower in `ys` than in `x`, 3.54 against 3.44
/// (`bench/results/runs/nvidia-h200-2026-11-24-s9-mm-speed3.md`).
fn a_kmajor(rb: crate::egraph::RegBlockSizes) -> bool {
    rb.rm % VEC == 0 && rb.rn >= rb.rm
}

/// What a register-blocked product's work-items pay for their registers: `ALONE` when fewer
/// than two groups of `group` fit in an SM's registers, else 1. A work-item holds its block,
/// the `rm` vectors of x (`rm` values from a K-major tile) and the `rn` values of ys of a step,
/// and its share of the next tiles (loaded ahead, `codegen_opencl` `gen_pipelined`), besides
/// indices and addresses, fewer where both tiles are copied as vectors (`vectors`).
fn rblock_occupancy(rb: crate::egraph::RegBlockSizes, group: f64, vectors: bool) -> f64 {
    let (rm, rn, v) = (rb.rm as f64, rb.rn as f64, VEC as f64);
    let a_held = if a_kmajor(rb) { rm } else { rm * v };
    let addresses = if vectors { VECTOR_ITEM_ADDRESSES } else { ITEM_ADDRESSES };
    let regs = rm * rn + a_held + rn + (rb.tm * rb.tk + rb.tk * rb.tn) as f64 / group + addresses;
    if SM_REGISTERS / (regs * group) < 2.0 {
        ALONE
    } else {
        1.0
    }
}

/// The registers of an SM (the H200's), shared by the work-groups resident on it.
const SM_REGISTERS: f64 = 65536.0;
/// Registers a work-item of a register-blocked product holds besides its values (indices,
/// addresses): `ptxas -v` counted 125 to 133 registers for the K-major 8×8 blocks whose values
/// `host_rblock` counts as 88 to 104 (`bench/results/runs/nvidia-h200-2026-11-24-s9-mm-speed3.md`).
const ITEM_ADDRESSES: f64 = 35.0;
/// `ITEM_ADDRESSES` where both tiles are copied as `float4`s, a quarter of the global addresses:
/// `ptxas -v` counted 128 registers for the 128×128/8×8/16 product so copied, whose values
/// `host_rblock` counts as 96 (`bench/results/runs/nvidia-h200-2026-11-24-s10-mm-speed4.md`).
const VECTOR_ITEM_ADDRESSES: f64 = 32.0;
/// Per warp of a work-group, what its barrier at each step of K costs a work-item: the
/// barrier waits for every warp of the group, and fewer, smaller groups cover each other's
/// waits. On the H200 at 4096³ the 8×8 blocks by groups of 128 (64×128 and 128×64 tiles,
/// K by 8) took 3.04 and 3.08 ms against 3.10 for groups of 256 (128×128), though each of
/// their work-items copies half as much again of the tiles (`Lowerer::rblock_cost`).
const BARRIER_WARP: f64 = 4.0;
/// Most multiply-adds of one step of K unrolled without cost (`LONG_STEP` beyond): on the
/// H200 each 8×8 product by steps of 16 (1,024 multiply-adds a step) was 1–2 % slower than
/// the same by steps of 8 (3.13 against 3.10 ms, 3.15 against 3.08, mm_tn 3.11 against 3.06,
/// mm_nt 3.21 against 3.16), whose fewer barriers should have made it faster. Not the length of the source: the
/// step as a `#pragma unroll` loop (`codegen_opencl` `gen/regblock.rs`) gave the same PTX and
/// time as written out (3.133 ms, 128×128/8×8/16, session 10). With the tiles copied as
/// `float4`s (`vector_copy`) the balance turned: 128×128/8×8 by 16 took 2.911 ms against 3.004
/// by 8 (`bench/results/runs/nvidia-h200-2026-11-24-s10-mm-speed4.md`).
const UNROLLED_FMAS: f64 = 512.0;
const LONG_STEP: f64 = 1.05;
/// A group alone on its SM (no other group's arithmetic covers its barriers and local reads):
/// on the H200 at 4096³ the 128×128/8×8/16 product (about 120 values per work-item) took
/// 4.33 ms, the 128×64/8×4/16 one (about 80) 3.85 ms, though it reads local memory more per
/// multiply-add (`bench/results/runs/nvidia-h200-2026-11-24-s8-mm-speed2.md`).
const ALONE: f64 = 1.25;

/// The first reduction over an array read in tiles (`egraph::reuse_rules`) that a row
/// function's body computes itself: not inside a function of it, and bound by nothing inside
/// the body (the work-group's tile loop runs outside the row function).
fn tiled_reduce(t: &Rc<Term>) -> Option<Rc<Term>> {
    match t.op {
        TOp::Reduce if t.kids[2].op == TOp::Map && matches!(t.kids[2].kids[1].op, TOp::Tiles(..)) => Some(t.clone()),
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp | TOp::Let => None,
        _ => t.kids.iter().find_map(tiled_reduce),
    }
}

/// `t` with the subterm `old` (by identity) replaced by `new`.
fn replace(t: &Rc<Term>, old: &Rc<Term>, new: &Rc<Term>) -> Rc<Term> {
    if Rc::ptr_eq(t, old) {
        return new.clone();
    }
    let kids: Vec<Rc<Term>> = t.kids.iter().map(|k| replace(k, old, new)).collect();
    Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
}

/// Per work-item: the two barriers of a tile and the accumulator's round trip through local
/// memory (the work-group's `reduceSeq` keeps it there).
const TILE_STEP: f64 = 8.0;
/// What reading an element of a tile from local memory saves against the global read of the
/// same element by every work-item (through the cache, all work-items of a group at once).
const REUSED_READ: f64 = 1.0;

impl Lowerer<'_> {
    /// `map (mapf (λp. B[reduce f z (map g (tiles T w))])) (split t X)`: `mapWrg0 (λc.
    /// let acc = join (reduceSeq (λaccs tile. let l = toLocal (mapLcl0 (λx. x) tile) in
    /// join (mapLcl0 (λap. let a0 = get 0 ap in let p = get 1 ap in reduceSeq (λa y. f a (g y))
    /// a0 l) (zip accs c))) (mapLcl0 (λq. z) c) (split T w)) in mapLcl0 (λap. let r = get 0 ap in
    /// let p = get 1 ap in B[r]) (zip (split 1 acc) c)) (split t X)`: the group walks `w` a tile
    /// at a time, each work-item copying `T / t` elements of it into local memory (consecutive
    /// work-items at consecutive addresses), then every work-item folds the tile from there
    /// into its own accumulator; the row function's remainder runs on the result. `None` when
    /// `t` is not such a map.
    fn host_reuse(&mut self, t: &Rc<Term>) -> Option<Out> {
        let k = &t.kids;
        if t.op != TOp::Map || k[0].op != TOp::MapF || k[0].kids[0].op != TOp::Lam {
            return None;
        }
        let TOp::Split(tc) = k[1].op else { return None };
        let row_fn = &k[0].kids[0];
        let red = tiled_reduce(&row_fn.kids[1])?;
        let (f, z, m) = (&red.kids[0], &red.kids[1], &red.kids[2]);
        let (g, tiles) = (&m.kids[0], &m.kids[1]);
        let TOp::Tiles(tl, rb) = tiles.op else {
            unreachable!("tiled_reduce found tiles")
        };
        let w = &tiles.kids[2];
        if self.computes(w) {
            return None;
        }
        // several rows per work-item: the fold is written out here, so `f` and `g` must be
        // functions it can apply (leaves), and a group's `tc · rb` rows must divide the rows
        let fused = match (&f.op, &g.op) {
            (TOp::Sym(fs), TOp::Sym(gs)) => Some((*fs, *gs)),
            _ => None,
        };
        let rows = self.len(&k[1].kids[1]);
        if rb > 1 && (fused.is_none() || rows % (tc * rb) as f64 != 0.0) {
            return None;
        }
        let x = &k[1].kids[1];
        let n = self.len(&k[1]) / rb as f64;
        let threads = n * tc as f64;
        let w_len = self.len(w);
        let p = Self::sym_name(&row_fn.kids[0]);
        let (xt, xc, xbind) = self.kernel_arg(x);
        let (we, _) = self.seq(w);
        let [chunk, accs, tile, l, id, ap, a0, q, acc, r] =
            ["chunk", "accs", "tile", "l", "x", "ap", "a0", "q", "acc", "r"].map(|b| self.name(b));
        let cv = self.b.bind(&chunk);
        // the step over one tile
        let (accsv, tilev) = (self.b.bind(&accs), self.b.bind(&tile));
        let idv = self.b.bind(&id);
        let ide = self.b.var(idv);
        self.b.unbind(idv);
        let idf = self.b.lambda(vec![idv], ide);
        let te = self.b.var(tilev);
        let copied = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![idf, te]);
        let staged = self.b.to(AddressSpace::Local, copied);
        let lv = self.b.bind(&l);
        let apv = self.b.bind(&ap);
        let a0_val = self.get(0, apv);
        let a0v = self.b.bind(&a0);
        let p_val = self.get(1, apv);
        // a work-item's rows are read once, into registers, not at each element of the tile
        let p_val = match rb {
            1 => p_val,
            _ => {
                let id = self.id_fn();
                let copy = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![id, p_val]);
                self.b.to(AddressSpace::Private, copy)
            }
        };
        let pv = self.b.bind(&p);
        let l_term = Term::new(
            TOp::Sym(Symbol::from(l.as_str())),
            vec![],
            Some(arith::ArithExpr::cst(tl)),
            None,
        );
        let elems = Term::new(TOp::Map, vec![g.clone(), l_term], Some(arith::ArithExpr::cst(tl)), None);
        let (fold, fold_cost) = match fused {
            Some((fs, gs)) if rb > 1 => self.rows_fold((fs, gs), (a0v, pv, lv), &p, tl, rb),
            Some(_) | None => {
                let fold = Term::new(TOp::Reduce, vec![f.clone(), sym(&a0), elems], red.len.clone(), None);
                self.seq(&fold)
            }
        };
        self.b.unbind(pv);
        let fold = self.b.let_(pv, p_val, fold);
        self.b.unbind(a0v);
        let fold = self.b.let_(a0v, a0_val, fold);
        self.b.unbind(apv);
        let item_fn = self.b.lambda(vec![apv], fold);
        let accs_e = self.b.var(accsv);
        let ce = self.b.var(cv);
        let (accs_e, ce) = (self.split_rows(rb, accs_e), self.split_rows(rb, ce));
        let pairs = self.b.prim(Prim::Zip, vec![accs_e, ce]);
        let folded = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![item_fn, pairs]);
        let folded = self.b.prim(Prim::Join, vec![folded]);
        self.b.unbind(lv);
        let step = self.b.let_(lv, staged, folded);
        self.b.unbind(tilev);
        self.b.unbind(accsv);
        let step = self.b.lambda(vec![accsv, tilev], step);
        // every work-item's accumulator starts at z
        let qv = self.b.bind(&q);
        let (ze, _) = self.seq(z);
        self.b.unbind(qv);
        let zf = self.b.lambda(vec![qv], ze);
        let ce = self.b.var(cv);
        let init = if rb > 1 {
            // one `mapLcl` index per work-item (the first `mapLcl` fixes the group's size)
            let qs = self.name("qs");
            let qsv = self.b.bind(&qs);
            let qse = self.b.var(qsv);
            let rows = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![zf, qse]);
            self.b.unbind(qsv);
            let rows_fn = self.b.lambda(vec![qsv], rows);
            let ce = self.split_rows(rb, ce);
            let init = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![rows_fn, ce]);
            self.b.prim(Prim::Join, vec![init])
        } else {
            self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![zf, ce])
        };
        let w_tiles = self.b.prim(Prim::Split(arith::ArithExpr::cst(tl)), vec![we]);
        let reduced = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, init, w_tiles]);
        let reduced = self.b.prim(Prim::Join, vec![reduced]);
        // the rest of the row function, on the reduction's result
        let accv = self.b.bind(&acc);
        let ap = self.name("ap");
        let apv = self.b.bind(&ap);
        let r_val = self.get(0, apv);
        let rv = self.b.bind(&r);
        let p_val = self.get(1, apv);
        // the step bound `p` already: this binder gets a name of its own
        let p2 = self.name(&p);
        let pv = self.b.bind_alias(&p, &p2);
        let rest = replace(&row_fn.kids[1], &red, &sym(&r));
        let (rest, rest_cost) = self.seq(&rest);
        self.b.unbind(pv);
        let rest = self.b.let_(pv, p_val, rest);
        self.b.unbind(rv);
        let rest = self.b.let_(rv, r_val, rest);
        self.b.unbind(apv);
        let rest_fn = self.b.lambda(vec![apv], rest);
        let acc_e = self.b.var(accv);
        let ones = self.b.prim(Prim::Split(arith::ArithExpr::cst(1)), vec![acc_e]);
        let ce = self.b.var(cv);
        let pairs = self.b.prim(Prim::Zip, vec![ones, ce]);
        let out = if rb > 1 {
            // each work-item its own rows, so that no `mapLcl` is longer than the group
            let bs = self.name("bs");
            let bsv = self.b.bind(&bs);
            let bse = self.b.var(bsv);
            let rows = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![rest_fn, bse]);
            self.b.unbind(bsv);
            let rows_fn = self.b.lambda(vec![bsv], rows);
            let blocks = self.split_rows(rb, pairs);
            let out = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![rows_fn, blocks]);
            self.b.prim(Prim::Join, vec![out])
        } else {
            self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![rest_fn, pairs])
        };
        self.b.unbind(accv);
        let body = self.b.let_(accv, reduced, out);
        self.b.unbind(cv);
        let chunk_fn = self.b.lambda(vec![cv], body);
        let chunks = self.b.prim(Prim::Split(arith::ArithExpr::cst(tc * rb)), vec![xt]);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![chunk_fn, chunks]);
        let e = self.b.to(AddressSpace::Global, e);
        let e = self.wrap(xbind, e);
        self.notes.push(match rb {
            1 => format!(
                "mapWrg {n} groups × mapLcl {tc}, {} read in tiles of {tl} staged in local memory",
                w.sexp()
            ),
            _ => format!(
                "mapWrg {n} groups × mapLcl {tc}, {rb} rows each, {} read in tiles of {tl} staged in local memory",
                w.sexp()
            ),
        });
        let under = if tc < 32 { 1.25 } else { 1.0 };
        let tiles_n = (w_len / tl as f64).max(1.0);
        // per tile and work-item: its share of the copy, the barriers and its accumulators'
        // round trip through local memory, the fold from local memory
        let step = TILE_STEP + 2.0 * (rb - 1) as f64;
        let per_tile = tl as f64 / tc as f64 * STAGED_COPY + step + fold_cost - tl as f64 * REUSED_READ;
        let cost = under * (threads / self.lanes).ceil() * (tiles_n * per_tile + rb as f64 * rest_cost) + rows * MEM;
        Some((e, xc + cost + LAUNCH))
    }
}

impl Lowerer<'_> {
    /// `split rb x`, or `x` itself for one row per work-item.
    fn split_rows(&mut self, rb: i64, x: ExprId) -> ExprId {
        match rb {
            1 => x,
            _ => self.b.prim(Prim::Split(arith::ArithExpr::cst(rb)), vec![x]),
        }
    }

    /// A work-item's fold of the local tile `l` (`tl` elements) into the results of its `rb`
    /// rows: `join (reduceSeq (λas y. mapSeqUnroll (λq. let a = get 0 q in let p = get 1 q in
    /// f a (g y)) (zip as ps)) a0 l)`, `a0` its accumulators, `ps` its rows and `p` the row
    /// variable that `g` reads. Each element is read once for all the rows, whose
    /// accumulators are independent chains of arithmetic (and registers: the unrolled map
    /// indexes them by constants). The cost: per element, each row's `f ∘ g` and one read.
    fn rows_fold(
        &mut self,
        (fs, gs): (Symbol, Symbol),
        (a0v, psv, lv): (VarId, VarId, VarId),
        p: &str,
        tl: i64,
        rb: i64,
    ) -> Out {
        let cost = tl as f64 * ((self.leaf_cost(&fs) + self.leaf_cost(&gs)) * rb as f64 + 1.0);
        let [accs, y, q, a] = ["as", "y", "q", "a"].map(|n| self.name(n));
        let (asv, yv) = (self.b.bind(&accs), self.b.bind(&y));
        let qv = self.b.bind(&q);
        let a_val = self.get(0, qv);
        let av = self.b.bind(&a);
        let p_val = self.get(1, qv);
        let p2 = self.name(p);
        let pv = self.b.bind_alias(p, &p2);
        self.notes.push("reduce∘map fused".into());
        let gy = self.call(&gs, &[Arg::Var(yv)]);
        let fa = self.call(&fs, &[Arg::Var(av), Arg::Expr(gy)]);
        self.b.unbind(pv);
        let body = self.b.let_(pv, p_val, fa);
        self.b.unbind(av);
        let body = self.b.let_(av, a_val, body);
        self.b.unbind(qv);
        let row_fn = self.b.lambda(vec![qv], body);
        let (ase, pse) = (self.b.var(asv), self.b.var(psv));
        let rows = self.b.prim(Prim::Zip, vec![ase, pse]);
        let step = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![row_fn, rows]);
        self.b.unbind(yv);
        self.b.unbind(asv);
        let step = self.b.lambda(vec![asv, yv], step);
        let (a0e, le) = (self.b.var(a0v), self.b.var(lv));
        let fold = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, a0e, le]);
        (self.b.prim(Prim::Join, vec![fold]), cost)
    }
}

impl Lowerer<'_> {
    /// Whether `t` is `reduce f z (join (map (λx. b) xs))` with `b` of one element: what
    /// [`Self::seq_fold_join`] folds without the joined array (k-means' argmin over the
    /// centres, each centre's distance a one-element reduction).
    fn folds_pieces(&self, t: &Term) -> bool {
        let j = &t.kids[2];
        if j.op != TOp::Join || j.kids[0].op != TOp::Map {
            return false;
        }
        let h = &j.kids[0].kids[0];
        h.op == TOp::Lam && h.kids[1].len.as_ref().and_then(|l| l.as_cst()) == Some(1)
    }

    /// `reduce f z (join (map h xs))`, `h` giving one element, in one work-item:
    /// `reduceSeq (λacc x. at 0 (reduceSeq f acc (h x))) z xs`. Folding a concatenation is
    /// folding its pieces in order, so this is the same fold; the pieces are never stored
    /// (as a sequential `join` of them would be, in a temporary array in global memory: k-means
    /// features-major at P = 819200 on an H200, 0.067 ms against 0.100).
    fn seq_fold_join(&mut self, t: &Rc<Term>) -> Out {
        let (f, z, m) = (&t.kids[0], &t.kids[1], &t.kids[2].kids[0]);
        let (h, xs) = (&m.kids[0], &m.kids[1]);
        let n = self.len(xs);
        let (ze, _) = self.seq(z);
        let (xe, xc) = self.seq(xs);
        let (acc, x) = (self.name("acc"), self.name("x"));
        let accv = self.b.bind(&acc);
        let xv = self.b.bind(&x);
        let x_term = Term::new(TOp::Sym(Symbol::from(x.as_str())), vec![], xs.inner.clone(), None);
        let piece = self.apply(h, x_term);
        let fold = Term::new(TOp::Reduce, vec![f.clone(), sym(&acc), piece], t.len.clone(), None);
        let (fold, fc) = self.seq(&fold);
        let first = self.b.int(0);
        let step = self.b.op(Op::At, vec![first, fold]);
        self.b.unbind(xv);
        self.b.unbind(accv);
        let step = self.b.lambda(vec![accv, xv], step);
        self.notes.push("reduce∘join fused".into());
        (
            self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![step, ze, xe]),
            xc + n * (fc + 1.0),
        )
    }
}

impl Lowerer<'_> {
    /// The source body of the opaque function `f`, and its parameters.
    fn leaf_body(&self, f: &Symbol) -> Option<(Vec<VarId>, ExprId)> {
        match self.b.src.expr(*self.origin.get(f)?) {
            Expr::Lambda { params, body } => Some((params.clone(), *body)),
            _ => None,
        }
    }

    /// Whether `gridreduce`'s `map h ys` is a dot product under `+` that `host_grid` may pad
    /// with zeros before `h`: `ys` a zip, `h` the product of two of its components, or sums,
    /// differences and products of components (`a·b + c`: zero where they are,
    /// `egraph::ZERO_PRODUCT`), `f` a sum.
    fn zero_product_dot(&self, h: &Symbol, f: &Rc<Term>, ys: &Term) -> bool {
        let zip = matches!(&ys.op, TOp::Other(s) if s.as_str().starts_with("zip|"));
        let src = self.b.src;
        let product = self.leaf_body(h).is_some_and(|(ps, body)| {
            ps.len() == 1
                && matches!(
                    src.expr(body),
                    Expr::Op {
                        op: Op::Add | Op::Sub | Op::Mul,
                        ..
                    }
                )
                && crate::encode::zero_at_zero(src, ps[0], body, &|_| true)
        });
        let sum = match &f.op {
            TOp::Sym(f) => self.leaf_body(f).is_some_and(|(ps, body)| {
                ps.len() == 2 && matches!(src.expr(body), Expr::Op { op: Op::Add, args } if args.len() == 2)
            }),
            _ => false,
        };
        zip && product && sum
    }

    /// The elements of a grid reduction of `map h ys` (`ys` a parameter, or a zip of
    /// parameters): `zip (pad #0 #r 0 ys) (pad #0 #r false (generate #n (λi. true)))`, each
    /// element of `ys` beside whether it is one (`true`) or padding, so that the work-items
    /// apply `h` to the elements of `ys` only (`guarded_reduce`) whatever `h` gives for a
    /// padding value.
    fn guarded_elems(&mut self, ys: &Rc<Term>, pad: &arith::ArithExpr) -> ExprId {
        use arith::ArithExpr as A;
        let padded = |me: &mut Self, t: &Rc<Term>, fill: ir::Lit| {
            let (e, _) = me.seq(t);
            let fill = me.b.lit(fill);
            me.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![fill, e])
        };
        let values = match &ys.op {
            TOp::Other(s) if s.as_str().starts_with("zip|") => {
                let comps = ys.kids.iter().map(|c| padded(self, c, ir::Lit::Float(0.0))).collect();
                self.b.prim(Prim::Zip, comps)
            }
            _ => padded(self, ys, ir::Lit::Float(0.0)),
        };
        let n = ys.len.clone().unwrap_or_else(|| A::cst(0));
        let i = self.name("i");
        let iv = self.b.bind(&i);
        let yes = self.b.lit(ir::Lit::Bool(true));
        self.b.unbind(iv);
        let all = self.b.lambda(vec![iv], yes);
        let mask = self.b.prim(Prim::Generate(n), vec![all]);
        let no = self.b.lit(ir::Lit::Bool(false));
        let mask = self.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![no, mask]);
        self.b.prim(Prim::Zip, vec![values, mask])
    }

    /// A work-item's reduction of its chunk `c` of `(y, in range)` pairs (`guarded_elems`):
    /// `reduceSeq (λacc t. if (get #1 t) (f acc (h (get #0 t))) acc) z c`.
    fn guarded_reduce(
        &mut self,
        f: &Symbol,
        z: &Rc<Term>,
        h: &Symbol,
        c: VarId,
        len: Option<&arith::ArithExpr>,
    ) -> Out {
        let (ze, _) = self.seq(z);
        let (acc, t) = (self.name("acc"), self.name("t"));
        let (av, tv) = (self.b.bind(&acc), self.b.bind(&t));
        let te = self.b.var(tv);
        let y = self.b.op(Op::Get(0), vec![te]);
        let hy = self.call(h, &[Arg::Expr(y)]);
        let next = self.call(f, &[Arg::Var(av), Arg::Expr(hy)]);
        let te = self.b.var(tv);
        let here = self.b.op(Op::Get(1), vec![te]);
        let same = self.b.var(av);
        let body = self.b.if_(here, next, same);
        self.b.unbind(tv);
        self.b.unbind(av);
        let lam = self.b.lambda(vec![av, tv], body);
        let ce = self.b.var(c);
        let n = self.eval(len);
        let cost = n * (self.leaf_cost(f) + self.leaf_cost(h) + 1.0);
        (self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![lam, ze, ce]), cost)
    }
}

/// `rblock c r g x ys` written without `join` (`egraph::RBLOCK_ROWS`) as the product it stands
/// for: `map (λr. map g ys) x`.
fn rblock_rows_as_map(t: &Rc<Term>) -> Rc<Term> {
    let (r, g, x, ys) = (&t.kids[1], &t.kids[2], &t.kids[3], &t.kids[4]);
    let row = Term::new(
        TOp::Map,
        vec![g.clone(), ys.clone()],
        ys.len.clone(),
        Some(arith::ArithExpr::cst(1)),
    );
    let f = Term::new(TOp::Lam, vec![r.clone(), row], None, None);
    Term::new(TOp::Map, vec![f, x.clone()], t.len.clone(), t.inner.clone())
}

impl Lowerer<'_> {
    /// `rblock c r g x ys` written without `join` (`reg-block-rows-*`): the product of the
    /// joined form (`host_rblock`), an `M × N` matrix, read back as `M` rows of `N` one-element
    /// arrays, `split N (split 1 (join C))`: the same buffer, no copy.
    fn host_rblock_rows(&mut self, t: &Rc<Term>, c: i64) -> Out {
        let sizes = c & !crate::egraph::RBLOCK_ROWS;
        let joined = Term::new(TOp::RBlock(sizes), t.kids.clone(), t.len.clone(), t.inner.clone());
        let (e, cost) = self.host(&joined);
        let Some(n) = t.kids[4].len.clone() else {
            self.b
                .broken
                .get_or_insert_with(|| "a register-blocked product of unknown width".into());
            return (e, cost);
        };
        let flat = self.b.prim(Prim::Join, vec![e]);
        let ones = self.b.prim(Prim::Split(arith::ArithExpr::cst(1)), vec![flat]);
        (self.b.prim(Prim::Split(n), vec![ones]), cost)
    }
}

impl Lowerer<'_> {
    /// `wg_tree` of `x`, through the `let`s that bind its parts (`let k2 (zip row x) (map h
    /// k2)`, as `bench/indep/gemv_bias.lisp` extracts): their values are put in place of their
    /// names, so that the tree sees the map (fused into the work-items' loop instead of stored
    /// first) and its zip (padded before a product); padded where `s` does not divide the
    /// length.
    fn grp_wg(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>, group: i64) -> Out {
        let whole = self.len(x) as i64;
        let s = if whole > group && whole % group == 0 { group } else { s };
        self.wg_tree_let(s, f, z, x)
    }

    fn wg_tree_let(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        let x = &inline_lets(x);
        if self.wg_needs_padding(s, x) {
            return self.wg_tree_padded(s, f, z, x);
        }
        self.wg_tree(s, f, z, x)
    }

    /// Whether a work-group reduction by `s` of `x` reads past its end: `x`'s length is known
    /// (from the sizes given) and not a multiple of `s` (`wg-reduce-pad-*`: rows of 1000).
    fn wg_needs_padding(&self, s: i64, x: &Term) -> bool {
        x.len
            .as_ref()
            .and_then(|n| n.eval(&|v| self.sizes.get(v).copied()).ok())
            .is_some_and(|n| n % s != 0)
    }

    /// `wg_tree` of a length `n` that `s` does not divide: the data padded at its end up to a
    /// multiple of `s`, each work-item reducing `⌈n/s⌉` elements `s` apart. A dot product
    /// `map h (zip p q)` under `+` is padded with zeros before `h` (`zero_product_dot`), a
    /// plain array with the neutral `z`; any other `map h ys` has its padding lanes marked and
    /// skipped (`guarded_elems`), so `h` sees the elements of `ys` only.
    fn wg_tree_padded(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let Some(len) = x.len.clone() else {
            return self.wg_tree(s, f, z, x);
        };
        // a chunk of more than 4 elements is padded to a multiple of 4 of them, which code
        // generation reads four at a time (`codegen_opencl` `maps::by_four`, kernels built for
        // their sizes): on the H200 gemv_bias's rows of 3000 took 0.0694 ms by 64 work-items
        // in chunks of 47 (one load at a time) against 0.0394 by 128 in chunks of 24
        // (`bench/results/runs/nvidia-h200-2026-11-24-s9-batch-rules.md`)
        let per_item = len.eval(&|v| self.sizes.get(v).copied()).map_or(0, |n| (n + s - 1) / s);
        let unit = if per_item > 4 { 4 * s } else { s };
        let pad = A::cst(unit - 1).sub(&len.sub(&A::cst(1)).rem(&A::cst(unit)));
        let chunk_len = len.add(&A::cst(unit - 1)).div(&A::cst(unit)).mul(&A::cst(unit / s));
        let c = self.name("chunk");
        let chunk = Term::new(
            TOp::Sym(Symbol::from(c.as_str())),
            vec![],
            Some(chunk_len.clone()),
            None,
        );
        let padded = |me: &mut Self, t: &Rc<Term>, fill: Option<&Rc<Term>>| {
            let (e, ec) = me.seq(t);
            let fill = match fill {
                Some(z) => me.seq(z).0,
                None => me.b.lit(ir::Lit::Float(0.0)),
            };
            (me.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![fill, e]), ec)
        };
        match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(h))) if self.zero_product_dot(h, f, &x.kids[1]) => {
                let mut comps = vec![];
                let mut cost = 0.0;
                for k in &x.kids[1].kids {
                    let (e, ec) = padded(self, k, None);
                    comps.push(e);
                    cost += ec;
                }
                let d = self.b.prim(Prim::Zip, comps);
                let elems = Term::new(TOp::Map, vec![x.kids[0].clone(), chunk], Some(chunk_len.clone()), None);
                self.wg_tree_over(s, f, z, (d, cost), (&c, Some(chunk_len)), elems, None)
            }
            (TOp::Map, Some(TOp::Sym(h))) => {
                let h = *h;
                let d = self.guarded_elems(&x.kids[1], &pad);
                self.wg_tree_over(s, f, z, (d, 0.0), (&c, Some(chunk_len)), chunk, Some(&h))
            }
            _ => {
                let d = padded(self, x, Some(z));
                self.wg_tree_over(s, f, z, d, (&c, Some(chunk_len)), chunk, None)
            }
        }
    }
}

/// `x` with its outer `let`s (and theirs, recursively) replaced by their bodies, each name in
/// place of its value: `let k v b` = `b[k := v]`. The rewriter's names are fresh, so no
/// binder in `b` captures one of `v`'s; a value used twice is computed twice (the views that
/// `let`-floating binds cost nothing more).
fn inline_lets(x: &Rc<Term>) -> Rc<Term> {
    fn subst(t: &Rc<Term>, k: &TOp, v: &Rc<Term>) -> Rc<Term> {
        if t.kids.is_empty() {
            return if t.op == *k { v.clone() } else { t.clone() };
        }
        let kids: Vec<_> = t.kids.iter().map(|c| subst(c, k, v)).collect();
        if kids.iter().zip(&t.kids).all(|(a, b)| Rc::ptr_eq(a, b)) {
            return t.clone();
        }
        Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
    }
    match &x.op {
        TOp::Let => {
            let v = inline_lets(&x.kids[1]);
            inline_lets(&subst(&x.kids[2], &x.kids[0].op, &v))
        }
        _ => x.clone(),
    }
}

/// How the work-items of a work-group reduction fold their chunks before the tree.
enum ChunkFold {
    /// `reduceSeq f z c`, a map producing `c` fused into it
    Plain,
    /// of `(y, in range)` pairs, `h y` of those in range (`Lowerer::guarded_reduce`)
    Guarded(Symbol),
    /// of `w`-lane vectors (`h` of each, where given), then across the lanes
    /// (`Lowerer::lanes_reduce`)
    Lanes { h: Option<Symbol>, w: i64 },
}

impl From<Option<&Symbol>> for ChunkFold {
    fn from(guard: Option<&Symbol>) -> ChunkFold {
        match guard {
            Some(h) => ChunkFold::Guarded(*h),
            None => ChunkFold::Plain,
        }
    }
}

impl Lowerer<'_> {
    /// `gridreduce` whose work-items read `w`-lane vectors (`grid-reduce-v{w}-*`): as
    /// `host_grid`, over `asVector w` of the parameter (or of each component of the dot
    /// product's zip), padded with vectors of `z` (zeros for the product, which `h` keeps
    /// zero) to a multiple of `g·s` vectors; each work-item folds its vectors lane by lane
    /// (`h` applied to vectors: a product of components is one lane-wise), then its lanes.
    /// One `float4` load per input and step where `host_grid` makes four scalar ones, so
    /// four times the bytes in flight for the same work-items.
    fn host_grid_lanes(&mut self, g: i64, s: i64, w: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let gs = g * s;
        let Some(len) = x.len.clone() else {
            self.b
                .broken
                .get_or_insert_with(|| "a grid reduction of unknown length".into());
            return (self.b.int(0), 0.0);
        };
        let vlen = len.div_assume_exact(&A::cst(w));
        let rows_len = vlen.add(&A::cst(gs - 1)).div(&A::cst(gs));
        let pad = A::cst(gs - 1).sub(&vlen.sub(&A::cst(1)).rem(&A::cst(gs)));
        let lanes_of = |me: &mut Self, t: &Rc<Term>| {
            let (e, _) = me.seq(t);
            let v = me.b.prim(Prim::AsVector(w as u8), vec![e]);
            let fill = me.vector_of(z, w);
            me.b.prim(Prim::Pad(A::cst(0), pad.clone()), vec![fill, v])
        };
        // the rule's forms only: another term of the same class (a map split into chunks) is
        // not read as vectors
        let (h, data) = match (&x.op, x.kids.first().map(|h| &h.op)) {
            (TOp::Map, Some(TOp::Sym(h))) if self.zero_product_dot(h, f, &x.kids[1]) => {
                let h = *h;
                let comps: Vec<_> = x.kids[1].kids.iter().map(|c| lanes_of(self, c)).collect();
                (Some(h), self.b.prim(Prim::Zip, comps))
            }
            (TOp::Sym(_), _) => (None, lanes_of(self, x)),
            _ => {
                self.b
                    .broken
                    .get_or_insert_with(|| "a vector grid reduction of a computed array".into());
                return (self.b.int(0), 0.0);
            }
        };
        let split = self.b.prim(Prim::Split(A::cst(gs)), vec![data]);
        let rows = self.b.prim(Prim::Transpose, vec![split]);
        let groups = self.b.prim(Prim::Split(A::cst(s)), vec![rows]);
        let grp = self.name("grp");
        let gv = self.b.bind(&grp);
        let ge = self.b.var(gv);
        let t = self.b.prim(Prim::Transpose, vec![ge]);
        let d = self.b.prim(Prim::Join, vec![t]);
        let c = self.name("chunk");
        let unused = Term::new(TOp::Sym(Symbol::from(c.as_str())), vec![], Some(rows_len.clone()), None);
        let (tree, tc) = self.wg_tree_fold(
            s,
            f,
            z,
            (d, 0.0),
            (&c, Some(rows_len)),
            unused,
            ChunkFold::Lanes { h, w },
        );
        let first = self.group_result(tree);
        self.b.unbind(gv);
        let first_fn = self.b.lambda(vec![gv], first);
        let first = self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![first_fn, groups]);
        let first = self.b.prim(Prim::Join, vec![first]);
        let out = self.grid_finish(g, s, f, z, (first, tc), (0.0, None));
        if let Some(n) = self.notes.last_mut() {
            n.push_str(&format!(", {w}-lane vector loads"));
        }
        out
    }

    /// `vec z z … z` (`w` lanes).
    fn vector_of(&mut self, z: &Rc<Term>, w: i64) -> ExprId {
        let lanes = (0..w).map(|_| self.seq(z).0).collect();
        self.b.op(Op::MakeVec, lanes)
    }

    /// A work-item's fold of its chunk `c` of `w`-lane vectors: `mapSeq (λv. f (f v.0 v.1) (f
    /// v.2 v.3)) (reduceSeq (λacc y. f acc (h y)) (vec z …) c)`, `f` applied lane-wise to the
    /// vectors (the sums `grid-reduce-v*` takes are) and then across the lanes, pairwise.
    fn lanes_reduce(
        &mut self,
        f: &Symbol,
        z: &Rc<Term>,
        h: Option<&Symbol>,
        w: i64,
        c: VarId,
        len: Option<&arith::ArithExpr>,
    ) -> Out {
        let zv = self.vector_of(z, w);
        let (acc, t) = (self.name("acc"), self.name("t"));
        let (av, tv) = (self.b.bind(&acc), self.b.bind(&t));
        let te = self.b.var(tv);
        let y = match h {
            Some(h) => self.call(h, &[Arg::Expr(te)]),
            None => te,
        };
        let next = self.call(f, &[Arg::Var(av), Arg::Expr(y)]);
        self.b.unbind(tv);
        self.b.unbind(av);
        let lam = self.b.lambda(vec![av, tv], next);
        let ce = self.b.var(c);
        let red = self.b.prim(Prim::Reduce(ReduceKind::Seq), vec![lam, zv, ce]);
        // the lanes and the pairwise sums are `let`-bound in the order they are printed (each
        // bound before the next), and `f` applied to variables only, so that the program read
        // back from its text names its variables as this one does
        let v = self.name("v");
        let vv = self.b.bind(&v);
        let mut binds: Vec<(VarId, ExprId)> = vec![];
        let mut lanes: Vec<VarId> = vec![];
        for k in 0..w {
            let name = self.name("lane");
            let lv = self.b.bind(&name);
            let ve = self.b.var(vv);
            let value = self.b.op(Op::VGet(k as u8), vec![ve]);
            binds.push((lv, value));
            lanes.push(lv);
        }
        while lanes.len() > 1 {
            let mut next = vec![];
            for p in lanes.chunks(2) {
                match p {
                    [a, b] => {
                        let name = self.name("lanes");
                        let sv = self.b.bind(&name);
                        let value = self.call(f, &[Arg::Var(*a), Arg::Var(*b)]);
                        binds.push((sv, value));
                        next.push(sv);
                    }
                    [a] => next.push(*a),
                    _ => unreachable!("chunks of two"),
                }
            }
            lanes = next;
        }
        let mut across = self.b.var(lanes[0]);
        for (var, value) in binds.into_iter().rev() {
            self.b.unbind(var);
            across = self.b.let_(var, value, across);
        }
        self.b.unbind(vv);
        let across = self.b.lambda(vec![vv], across);
        let n = self.eval(len);
        let cost = n * (self.leaf_cost(f) + h.map_or(0.0, |h| self.leaf_cost(h))) + w as f64 * self.leaf_cost(f);
        (self.b.prim(Prim::Map(MapKind::Seq), vec![across, red]), cost)
    }
}

impl Lowerer<'_> {
    /// `map (λab. rblock c r g x ys) xs` with `RBLOCK_BATCH` in `c` (`batch-reg-block-*`): the
    /// batch is the third dimension of the grid, `mapWrg2 (λab. P) xs`, `P` the register-blocked
    /// product of the batch element (`host_rblock`: `mapWrg1 × mapWrg0` over its tiles), its
    /// `x` and `ys` read from `ab` through the `let`s that bound them (`transpose (get 1 ab)`).
    /// The source's leaves of `x` and `ys` (`get #0 ab`) are bound to variables at the top of
    /// the batch element's function: a `get` deep inside would be `let`-bound where it is read
    /// (as the reader binds what may be existential), and so would everything built on it,
    /// and a `let` whose body maps its variable is a copy at work-group level for `validate`.
    fn host_batch_rblock(&mut self, t: &Rc<Term>) -> Option<Out> {
        let (f, xs) = match t.op {
            TOp::Map => (&t.kids[0], &t.kids[1]),
            _ => return None,
        };
        let body = f.kids.get(1).filter(|_| f.op == TOp::Lam)?;
        let TOp::RBlock(c) = body.op else { return None };
        if c & crate::egraph::RBLOCK_BATCH == 0 {
            return None;
        }
        let c = c & !crate::egraph::RBLOCK_BATCH;
        // a product `host_rblock` would map as it stands (not a dot product it takes apart)
        // is the batch's map too
        let r_name = Self::sym_name(&body.kids[1]);
        self.dot_parts(&body.kids[2], &r_name)?;
        let batch = self.len(xs);
        let (xst, xsc, bind) = self.kernel_arg(xs);
        let abv = self.b.bind(&Self::sym_name(&f.kids[0]));
        let mut bound = vec![];
        let mut kids = body.kids.clone();
        for k in [3, 4] {
            kids[k] = self.bind_leaves(&inline_lets(&kids[k]), &mut bound);
        }
        let (x, ys) = (kids[3].clone(), kids[4].clone());
        let product = Term::new(TOp::RBlock(c), kids, body.len.clone(), body.inner.clone());
        let (mut e, _) = self.host(&product);
        for (v, value) in bound.into_iter().rev() {
            self.b.unbind(v);
            e = self.b.let_(v, value, e);
        }
        self.b.unbind(abv);
        let fun = self.b.lambda(vec![abv], e);
        let e = self.b.prim(Prim::Map(MapKind::Wrg(2)), vec![fun, xst]);
        self.notes.push(format!("mapWrg2 over a batch of {batch}"));
        // as `host_rblock`'s, for the work-items of every element of the batch at once
        let rb = crate::egraph::RegBlockSizes::unpack(c);
        let (rows_n, cols_n, k_len) = (self.len(&x), self.len(&ys), self.eval(x.inner.as_ref()));
        let cost = self.rblock_cost(rb, batch * rows_n * cols_n, k_len, &x, &ys);
        Some((self.wrap(bind, e), xsc + cost))
    }

    /// `t` with each opaque leaf copied from the source (`get #0 ab`) replaced by a fresh
    /// variable, bound (still in scope) to the leaf's copy and pushed on `bound`.
    fn bind_leaves(&mut self, t: &Rc<Term>, bound: &mut Vec<(VarId, ExprId)>) -> Rc<Term> {
        if let TOp::Sym(s) = &t.op {
            if !self.origin.contains_key(s) {
                return t.clone();
            }
            let value = self.leaf(s);
            let name = self.name("m");
            let v = self.b.bind(&name);
            bound.push((v, value));
            return Term::new(
                TOp::Sym(Symbol::from(name.as_str())),
                vec![],
                t.len.clone(),
                t.inner.clone(),
            );
        }
        let kids: Vec<_> = t.kids.iter().map(|k| self.bind_leaves(k, bound)).collect();
        Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
    }
}

impl Lowerer<'_> {
    /// What a register-blocked product of `outputs` elements costs (`host_rblock`, and
    /// `host_batch_rblock` for every element of its batch at once). Per work-item and element
    /// of K: `rm·rn` multiply-adds and `(rm + rn) / VEC` vector reads of local memory. Per step
    /// of K: its share of the two tiles' copies, an instruction pair per element
    /// (`TILE_ELEM`) and a transaction per 128-byte line a tile's rows touch in global memory
    /// (`TILE_LINE`), and the barrier, which waits for every warp of the group
    /// (`BARRIER_WARP` each). A tile lies along its rows of K in global memory unless its
    /// matrix is a `transpose`: rows of K are `tk` floats, and a step of 8 reads a 32-byte run
    /// of each of the tile's rows, a line each, where a tile along its long side reads whole
    /// lines. Counted so, on the H200 at 4096³, the larger tiles of `mm_nt` (both operands
    /// along K: 128×128 3.16 ms against 3.20 for 64×128 and 128×64) rank first, while `mm`
    /// (one, 64×128 3.04 ms against 3.10) and `mm_tn` (none, 128×64 3.02 against 3.06) keep
    /// groups of 128 first (`bench/results/runs/nvidia-h200-2026-11-24-s9-mm-speed3.md`).
    fn rblock_cost(&self, rb: crate::egraph::RegBlockSizes, outputs: f64, k_len: f64, x: &Term, ys: &Term) -> f64 {
        let (rm, rn, tk, v) = (rb.rm as f64, rb.rn as f64, rb.tk as f64, VEC as f64);
        let group = rb.items() as f64;
        let items = outputs / (rm * rn);
        let lines = |rows: i64, transposed: bool| -> f64 {
            let (runs, run) = if transposed { (rb.tk, rows) } else { (rows, rb.tk) };
            (runs * ((run + LINE_FLOATS - 1) / LINE_FLOATS)) as f64
        };
        // a tile copied as vectors (`vector_copy`) issues a load and a store for each four of
        // its elements
        let (a_vec, b_vec) = self.rblock_tile_vectors(rb, x, ys);
        let elems = |n: i64, vec: bool| n as f64 / if vec { v } else { 1.0 };
        let copy = TILE_ELEM * (elems(rb.tm * rb.tk, a_vec) + elems(rb.tn * rb.tk, b_vec))
            + TILE_LINE * (lines(rb.tm, self.is_transpose(x)) + lines(rb.tn, self.is_transpose(ys)));
        let barrier = BARRIER_WARP * group / 32.0;
        let per_item = k_len * (rm * rn + 0.5 * (rm + rn) / v) + (k_len / tk) * (copy / group + barrier);
        let alone = rblock_occupancy(rb, group, a_vec && b_vec);
        // a step unrolled into more multiply-adds than `UNROLLED_FMAS`, with a tile copied by
        // scalars (`LONG_STEP`: with both copied as vectors steps of 16 were the faster)
        let long = if rm * rn * tk > UNROLLED_FMAS && !(a_vec && b_vec) {
            LONG_STEP
        } else {
            1.0
        };
        (items / self.lanes).ceil() * per_item * alone * long + items * rm * rn * MEM + LAUNCH
    }
}

/// Floats in a 128-byte line, what one transaction of a warp's global load moves.
const LINE_FLOATS: i64 = 32;
/// A tile element's copy into local memory: its global load and local store.
const TILE_ELEM: f64 = 1.0;
/// A line of a tile read from global memory per step of K, fitted with `TILE_ELEM` and
/// `BARRIER_WARP` to the order of the H200's 8×8 products at 4096³ (`Lowerer::rblock_cost`).
const TILE_LINE: f64 = 32.0;

/// The share of an SM's work-item slots (`SM_ITEMS`) that work-groups of `s` work-items fill,
/// as if at most `RESIDENT_GROUPS` of them were resident: a work-group reduction's loads in
/// flight, what bounds it, scale with it. On the H200 gemv_bias's rows of 3000 (10000 groups)
/// took 0.0658 ms by 64 work-items (chunks of 48, read four at a time), 0.0350 by 128 (24)
/// and 0.0427 by 256 (`bench/results/runs/nvidia-h200-2026-11-24-s10-cost-model2.md`); every
/// tuned best of the suite's work-group reductions is by 128 or 256.
fn wg_occupancy(s: i64) -> f64 {
    ((s * RESIDENT_GROUPS) as f64 / SM_ITEMS).min(1.0)
}

/// Work-item slots of an SM (the H200's).
const SM_ITEMS: f64 = 2048.0;
/// Work-groups resident on an SM at most, as the H200's work-group reductions ran
/// (`wg_occupancy`).
const RESIDENT_GROUPS: i64 = 16;

/// What the barrier that ends each work-group of a `mapWrg × mapLcl` kernel (a global memory
/// fence, `codegen_opencl`'s) costs each of its work-items, whatever the group's size (counted
/// per warp it would rank sub-warp groups first, which `under` charges for idle lanes): a
/// `mapGlb` has none. nn's pairs (33.5 M) took 0.1020 ms on the H200 by `mapGlb` (groups of
/// 128) against 0.1664 by `mapWrg 262144 × mapLcl 128`, which the model had ranked equal and
/// first (`bench/results/nvidia-h200-2026-11-24-s9.md`, `runs/nvidia-h200-2026-11-24-s9-final-rows.md`).
const GROUP_END_BARRIER: f64 = BARRIER_WARP;
