//! From an extracted high-level term to a low-level LIFT program (source text), with the
//! OpenCL mapping decisions and the cost model's estimate.
//!
//! Mapping: at host level, each computed value is a kernel: an outer `map` becomes `mapGlb`, or
//! `mapWrg` with `mapLcl` inside when its function is a map over a chunk (`mapf`), or `mapGlb1`
//! with `mapGlb` inside when its function's body is itself a map; everything below is sequential
//! (`mapSeq`, `reduceSeq`, a reduction of a map fused into one `reduceSeq`). A host-level value
//! that a kernel reads is bound by `let`, so it is computed by an earlier kernel.
//!
//! Cost (arbitrary units, about one per scalar operation): a launch costs `LAUNCH`; a parallel
//! loop of `n` work-items over a body of cost `b` costs `ceil(n / lanes) * b` plus memory
//! traffic `n * MEM`; a sequential loop costs `n * (b + 1)`.

use crate::extract::{TOp, Term};
use egg::Symbol;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

const LAUNCH: f64 = 2000.0;
const MEM: f64 = 0.05;
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
    pub taken: BTreeSet<String>,
    pub sizes: &'a BTreeMap<String, i64>,
    pub default_size: i64,
    pub lanes: f64,
    pub fresh: usize,
    pub notes: Vec<String>,
}

type Out = (String, f64);

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

/// `λr. map g ys` or `λr. join (map g ys)`: the inner map and whether it is joined.
fn two_d(f: &Rc<Term>) -> Option<(Rc<Term>, bool)> {
    if f.op != TOp::Lam {
        return None;
    }
    let b = &f.kids[1];
    match b.op {
        TOp::Map => Some((b.clone(), false)),
        TOp::Join if b.kids[0].op == TOp::Map => Some((b.kids[0].clone(), true)),
        _ => None,
    }
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

    fn eval(&self, e: Option<&arith::ArithExpr>) -> f64 {
        let d = self.default_size;
        e.and_then(|e| crate::egraph::estimate(e, self.sizes, d)).unwrap_or(d) as f64
    }

    fn leaf(&self, s: &Symbol) -> String {
        self.text.get(s).cloned().unwrap_or_else(|| s.to_string())
    }

    fn leaf_cost(&self, s: &Symbol) -> f64 {
        self.text
            .get(s)
            .map_or(0.0, |t| t.matches('(').count().saturating_sub(1) as f64)
            .max(1.0)
    }

    /// Whether evaluating `t` runs any computation (as opposed to only rearranging arrays).
    fn computes(&self, t: &Term) -> bool {
        match &t.op {
            TOp::Map | TOp::Reduce | TOp::App | TOp::Let => true,
            TOp::Other(s) => {
                let head = s.as_str().split(['|', ' ']).next().unwrap_or("");
                !LAYOUT.contains(&head) || t.kids.iter().any(|k| self.computes(k))
            }
            _ => t.kids.iter().any(|k| self.computes(k)),
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

    /// A function as a lambda for sequential code, and its cost per application on an argument
    /// of outer length `arg_len`.
    fn func(&mut self, f: &Rc<Term>, arg_len: f64) -> Out {
        match &f.op {
            TOp::Sym(s) => (self.leaf(s), self.leaf_cost(s)),
            TOp::Lam => {
                let (b, c) = self.seq(&f.kids[1]);
                (format!("(lambda ({}) {b})", f.kids[0].sexp()), c)
            }
            _ => {
                let v = self.name("v");
                let mut arg = sym(&v);
                if let Some(a) = Rc::get_mut(&mut arg) {
                    a.len = Some(arith::ArithExpr::cst(arg_len as i64));
                }
                let body = self.apply(f, arg);
                let (b, c) = self.seq(&body);
                (format!("(lambda ({v}) {b})"), c)
            }
        }
    }

    fn kids_text(&mut self, t: &Term, host: bool) -> Out {
        let mut s = String::new();
        let mut cost = 0.0;
        for k in &t.kids {
            let (kt, kc) = if is_fun(k) {
                self.func(k, self.eval(t.inner.as_ref()))
            } else if host {
                self.host(k)
            } else {
                self.seq(k)
            };
            s.push(' ');
            s.push_str(&kt);
            cost += kc;
        }
        (s, cost)
    }

    /// Code run by one work-item.
    pub fn seq(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        match &t.op {
            TOp::Map => {
                let n = self.len(&k[1]);
                let (f, fc) = self.func(&k[0], self.eval(k[1].inner.as_ref()));
                let (x, xc) = self.seq(&k[1]);
                (format!("(mapSeq {f} {x})"), xc + n * (fc + 1.0))
            }
            TOp::Reduce | TOp::ReduceU => {
                let (f, fc) = self.func(&k[0], 1.0);
                let (z, _) = self.seq(&k[1]);
                let (prim, step) = if t.op == TOp::ReduceU {
                    self.notes.push("reduceSeqUnroll".into());
                    // no loop counter or branch per element
                    ("reduceSeqUnroll", 0.5)
                } else {
                    ("reduceSeq", 1.0)
                };
                if k[2].op == TOp::Map && matches!(k[2].kids[0].op, TOp::Sym(_)) {
                    // reduce f z (map g ys) = reduceSeq (λ acc y. f acc (g y)) z ys
                    let (g, gc) = self.func(&k[2].kids[0], 1.0);
                    let ys = &k[2].kids[1];
                    let n = self.len(ys);
                    let (y, yc) = self.seq(ys);
                    let (a, b) = (self.name("acc"), self.name("y"));
                    self.notes.push("reduce∘map fused".into());
                    return (
                        format!("({prim} (lambda ({a} {b}) ({f} {a} ({g} {b}))) {z} {y})"),
                        yc + n * (fc + gc + step),
                    );
                }
                let n = self.len(&k[2]);
                let (x, xc) = self.seq(&k[2]);
                (format!("({prim} {f} {z} {x})"), xc + n * (fc + step))
            }
            TOp::App => {
                let (f, fc) = self.func(&k[0], 1.0);
                let (a, ac) = self.seq(&k[1]);
                (format!("({f} {a})"), fc + ac)
            }
            TOp::Let => {
                let (v, vc) = self.seq(&k[1]);
                let (b, bc) = self.seq(&k[2]);
                (format!("(let {} {v} {b})", k[0].sexp()), vc + bc)
            }
            TOp::Sym(s) => (self.leaf(s), 0.0),
            TOp::Num(n) => (n.to_string(), 0.0),
            TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => self.func(t, 1.0),
            _ => self.layout(t, false),
        }
    }

    fn layout(&mut self, t: &Rc<Term>, host: bool) -> Out {
        let k = &t.kids;
        let one = |me: &mut Self, x: &Rc<Term>| if host { me.host(x) } else { me.seq(x) };
        match &t.op {
            TOp::Split(n) => {
                let (x, c) = one(self, &k[1]);
                (format!("(split #{n} {x})"), c)
            }
            TOp::AsVector(w) => {
                let (x, c) = one(self, &k[1]);
                (format!("(asVector #{w} {x})"), c)
            }
            TOp::Join => {
                let (x, c) = one(self, &k[0]);
                (format!("(join {x})"), c)
            }
            TOp::AsScalar => {
                let (x, c) = one(self, &k[0]);
                (format!("(asScalar {x})"), c)
            }
            TOp::Transpose => {
                let (x, c) = one(self, &k[0]);
                (format!("(transpose {x})"), c)
            }
            // Staging only means something where a work-group copies the tile (`host_tiled`).
            TOp::Local => one(self, &k[0]),
            TOp::Other(s) => {
                let head = self.leaf(s);
                let (kt, kc) = self.kids_text(t, host);
                (format!("({head}{kt})"), kc)
            }
            _ => one(self, t),
        }
    }

    /// An array argument of a kernel: a `let`-bound earlier kernel when it computes.
    fn kernel_arg(&mut self, x: &Rc<Term>) -> (String, f64, Option<(String, String)>) {
        if self.computes(x) {
            let (v, c) = self.host(x);
            let p = self.name("tmp");
            self.notes.push("separate kernel for an intermediate".into());
            (p.clone(), c, Some((p, v)))
        } else {
            let (v, c) = self.seq(x);
            (v, c, None)
        }
    }

    fn wrap(bind: Option<(String, String)>, body: String) -> String {
        match bind {
            Some((p, v)) => format!("(let {p} {v} {body})"),
            None => body,
        }
    }

    fn is_transpose(&self, t: &Term) -> bool {
        match &t.op {
            TOp::Transpose => true,
            TOp::Other(s) => self.leaf(s) == "transpose",
            _ => false,
        }
    }

    /// One kernel: work-group (i, j) computes block (i, j) of the result, work-item (i, j) of
    /// the group one element; tiles marked for staging are first copied into local memory by
    /// the whole work-group (a transposed tile is copied in its stored orientation, so the
    /// global reads are coalesced).
    /// The body of a work-group of a K-tiled block: `reduceSeq` over pairs of tiles, each
    /// staged in local memory, accumulating into the block (local memory, one element per
    /// work-item), starting from `z`; `None` when `g` is not `λc. reduce f z (map h (zip r c))`.
    fn ktiled_body(&mut self, p: &Tiled, kt: i64) -> Option<String> {
        let g = &p.g;
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
        if self.leaf(zip) != "zip" || zipped.kids.len() != 2 {
            return None;
        }
        let (a, b) = (name_of(&zipped.kids[0])?, name_of(&zipped.kids[1])?);
        let c = name_of(c)?;
        let swapped = match (a == p.r, b == c) {
            (true, true) => false,
            _ if a == c && b == p.r => true,
            _ => return None,
        };
        let (ft, zt, ht) = (self.leaf(fs), self.leaf(zs), self.leaf(hs));
        let [acc, tiles, la, lb, ar, ab, s, q, v, x, i] =
            ["acc", "tiles", "la", "lb", "ar", "ab", "s", "q", "v", "x", "i"].map(|n| self.name(n));
        let copy = format!("(mapLcl1 (lambda ({v}) (mapLcl0 (lambda ({x}) {x}) {v}))");
        let pair = if swapped {
            format!("(zip (get #1 {ab}) (get #1 {ar}))")
        } else {
            format!("(zip (get #1 {ar}) (get #1 {ab}))")
        };
        let step = format!(
            "(lambda ({acc} {tiles}) (let {la} (toLocal {copy} (get #0 {tiles}))) (let {lb} (transpose (toLocal {copy} (transpose (get #1 {tiles}))))) (mapLcl1 (lambda ({ar}) (join (mapLcl0 (lambda ({ab}) (reduceSeq (lambda ({s} {q}) ({ft} {s} ({ht} {q}))) (get #0 {ab}) {pair})) (zip (get #0 {ar}) {lb})))) (zip {acc} {la})))))"
        );
        let init = format!(
            "{copy} (split #{} (generate #{} (lambda ({i}) {zt}))))",
            p.t0,
            p.t1 * p.t0
        );
        let pairs = format!(
            "(zip (transpose (map (split #{kt}) {})) (transpose (map (split #{kt}) {})))",
            p.big_r, p.big_c
        );
        Some(format!("(join (reduceSeq {step} {init} {pairs}))"))
    }

    fn host_tiled(&mut self, p: &Tiled) -> Out {
        let (n1, n0) = (self.len(&p.xs), self.len(&p.ys));
        let k_len = self.eval(p.xs.inner.as_ref());
        let (xt, xc, xbind) = self.kernel_arg(&p.xs);
        let (yt, yc, ybind) = self.kernel_arg(&p.ys);
        let (g, gc) = self.func(&p.g, self.eval(p.ys.inner.as_ref()));
        let copy = "(mapLcl1 (lambda (v) (mapLcl0 (lambda (x) x) v))";
        let (la, lb) = (self.name("la"), self.name("lb"));
        let mut lets = String::new();
        let mut closing = String::new();
        let rows = if p.stage_r {
            lets.push_str(&format!("(let {la} (toLocal {copy} {})) ", p.big_r));
            closing.push(')');
            la.clone()
        } else {
            p.big_r.clone()
        };
        let cols = if p.stage_c {
            let stage = if self.is_transpose(&p.ys) {
                format!("(transpose (toLocal {copy} (transpose {}))))", p.big_c)
            } else {
                format!("(toLocal {copy} {}))", p.big_c)
            };
            lets.push_str(&format!("(let {lb} {stage} "));
            closing.push(')');
            lb.clone()
        } else {
            p.big_c.clone()
        };
        let inner = format!("(mapLcl0 {g} {cols})");
        let inner = if p.joined { format!("(join {inner})") } else { inner };
        let ktiled = p.ktile.and_then(|kt| self.ktiled_body(p, kt));
        let body = match &ktiled {
            Some(b) => b.clone(),
            None => format!("{lets}(mapLcl1 (lambda ({}) {inner}) {rows}){closing}", p.r),
        };
        let text = format!(
            "(toGlobal (join (mapWrg1 (lambda ({}) (map (lambda ({}) (join {})) (transpose (mapWrg0 (lambda ({}) {body}) (split #{} {yt}))))) (split #{} {xt}))))",
            p.big_r, p.z, p.z, p.big_c, p.t0, p.t1
        );
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

        let text = Self::wrap(ybind, Self::wrap(xbind, text));
        (text, xc + yc + compute + stage + threads * MEM + LAUNCH)
    }

    /// Code at host level: a sequence of kernels.
    pub fn host(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        if let Some(p) = tiled(t) {
            return self.host_tiled(&p);
        }
        match &t.op {
            TOp::Map => {
                let (f, x) = (&k[0], &k[1]);
                let n = self.len(x);
                let (xt, xc, bind) = self.kernel_arg(x);
                let m = self.eval(x.inner.as_ref());
                let (text, cost) = if f.op == TOp::MapF {
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
                    (
                        format!("(mapWrg (lambda ({c}) (mapLcl {g} {c})) {xt})"),
                        under * (threads / self.lanes).ceil() * gc + threads * MEM,
                    )
                } else if let Some((inner, joined)) = two_d(f).filter(|(i, _)| !self.computes(&i.kids[1])) {
                    let m = self.len(&inner.kids[1]);
                    let (g, gc) = self.func(&inner.kids[0], self.eval(inner.kids[1].inner.as_ref()));
                    let (y, _) = self.seq(&inner.kids[1]);
                    self.notes.push(format!("mapGlb1 {n} × mapGlb {m}"));
                    let threads = n * m;
                    let body = format!("(mapGlb {g} {y})");
                    let body = if joined { format!("(join {body})") } else { body };
                    (
                        format!("(mapGlb1 (lambda ({}) {body}) {xt})", f.kids[0].sexp()),
                        (threads / self.lanes).ceil() * gc + threads * MEM,
                    )
                } else {
                    let (g, gc) = self.func(f, m);
                    self.notes.push(format!("mapGlb {n}"));
                    (format!("(mapGlb {g} {xt})"), (n / self.lanes).ceil() * gc + n * MEM)
                };
                (Self::wrap(bind, format!("(toGlobal {text})")), xc + cost + LAUNCH)
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
                    let body = format!("(toGlobal (reduceSeq {f} {z} {xt}))");
                    return (Self::wrap(bind, body), xc + n * (fc + 1.0) + LAUNCH);
                }
                let (s, c) = self.seq(t);
                self.notes.push(format!("one-work-item reduceSeq over {}", self.len(x)));
                (format!("(toGlobal {s})"), c + LAUNCH)
            }
            TOp::Let => {
                let (v, vc) = self.host(&k[1]);
                let (b, bc) = self.host(&k[2]);
                (format!("(let {} {v} {b})", k[0].sexp()), vc + bc)
            }
            TOp::Sym(s) => (self.leaf(s), 0.0),
            TOp::Other(_) if self.computes(t) => {
                let (s, c) = self.layout(t, true);
                (s, c + LAUNCH + self.len(t) * MEM)
            }
            _ => self.layout(t, true),
        }
    }
}
