//! Cooperative reductions by the work-items of a work-group (`wgreduce`): the group's tree in
//! local memory, padded rows, and the guarded reads of the padding.

use super::*;

/// Whether `t` holds a work-group reduction outside any function of it: run at work-group level
/// when `t` is the body of a `mapWrg`'s function.
pub(super) fn has_wg(t: &Term) -> bool {
    match t.op {
        TOp::WgReduce(_) => true,
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => false,
        _ => t.kids.iter().any(|k| has_wg(k)),
    }
}

/// `wgreduce s f z xs` as the `reduce f z xs` it equals.
pub(super) fn as_reduce(t: &Rc<Term>) -> Rc<Term> {
    Term::new(TOp::Reduce, t.kids[1..].to_vec(), t.len.clone(), t.inner.clone())
}

/// The largest work-group of the work-group reductions in `t` (at work-group level).
pub(super) fn wg_size(t: &Term) -> i64 {
    match t.op {
        TOp::WgReduce(s) => s,
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp => 1,
        _ => t.kids.iter().map(|k| wg_size(k)).max().unwrap_or(1),
    }
}

impl Lowerer<'_> {
    /// Whether the rows of `x` are columns of a stored array (so consecutive elements of a row
    /// are a row apart in memory).
    pub(super) fn reads_columns(&self, x: &Term) -> bool {
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
    pub(super) fn host_wg(&mut self, f: &Rc<Term>, x: &Rc<Term>) -> Out {
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
    pub(super) fn grp_out(&mut self, t: &Rc<Term>, group: i64) -> Out {
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
    pub(super) fn grp(&mut self, t: &Rc<Term>, group: i64) -> Out {
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
    pub(super) fn wg_tree(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        self.wg_tree_by(s, f, z, x, None)
    }

    /// `wg_tree`; with `guard = Some(h)`, `x` holds `(y, in range)` pairs
    /// (`Lowerer::guarded_elems`) and the elements reduced are `h y` of the pairs in range.
    pub(super) fn wg_tree_by(
        &mut self,
        s: i64,
        f: &Rc<Term>,
        z: &Rc<Term>,
        x: &Rc<Term>,
        guard: Option<&Symbol>,
    ) -> Out {
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
    pub(super) fn wg_tree_over(
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
    pub(super) fn wg_tree_fold(
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

impl Lowerer<'_> {
    /// The source body of the opaque function `f`, and its parameters.
    pub(super) fn leaf_body(&self, f: &Symbol) -> Option<(Vec<VarId>, ExprId)> {
        match self.b.src.expr(*self.origin.get(f)?) {
            Expr::Lambda { params, body } => Some((params.clone(), *body)),
            _ => None,
        }
    }

    /// Whether `gridreduce`'s `map h ys` is a dot product under `+` that `host_grid` may pad
    /// with zeros before `h`: `ys` a zip, `h` the product of two of its components, or sums,
    /// differences and products of components (`a·b + c`: zero where they are,
    /// `egraph::ZERO_PRODUCT`), `f` a sum.
    pub(super) fn zero_product_dot(&self, h: &Symbol, f: &Rc<Term>, ys: &Term) -> bool {
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
    pub(super) fn guarded_elems(&mut self, ys: &Rc<Term>, pad: &arith::ArithExpr) -> ExprId {
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
    pub(super) fn guarded_reduce(
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

impl Lowerer<'_> {
    /// `wg_tree` of `x`, through the `let`s that bind its parts (`let k2 (zip row x) (map h
    /// k2)`, as `bench/indep/gemv_bias.lisp` extracts): their values are put in place of their
    /// names, so that the tree sees the map (fused into the work-items' loop instead of stored
    /// first) and its zip (padded before a product); padded where `s` does not divide the
    /// length.
    pub(super) fn grp_wg(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>, group: i64) -> Out {
        let whole = self.len(x) as i64;
        let s = if whole > group && whole % group == 0 { group } else { s };
        self.wg_tree_let(s, f, z, x)
    }

    pub(super) fn wg_tree_let(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        let x = &inline_lets(x);
        if self.wg_needs_padding(s, x) {
            return self.wg_tree_padded(s, f, z, x);
        }
        self.wg_tree(s, f, z, x)
    }

    /// Whether a work-group reduction by `s` of `x` reads past its end: `x`'s length is known
    /// (from the sizes given) and not a multiple of `s` (`wg-reduce-pad-*`: rows of 1000).
    pub(super) fn wg_needs_padding(&self, s: i64, x: &Term) -> bool {
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
    pub(super) fn wg_tree_padded(&mut self, s: i64, f: &Rc<Term>, z: &Rc<Term>, x: &Rc<Term>) -> Out {
        use arith::ArithExpr as A;
        let Some(len) = x.len.clone() else {
            return self.wg_tree(s, f, z, x);
        };
        // a chunk of more than 4 elements is padded to a multiple of 4 of them, which code
        // generation reads four at a time (`codegen_opencl` `maps::by_four`, kernels built for
        // their sizes): on the H200 gemv_bias's rows of 3000 took 0.0694 ms by 64 work-items
        // in chunks of 47 (one load at a time) against 0.0394 by 128 in chunks of 24
        // (`bench/results/runs/nvidia-h200-2026-11-24-batch-rules-8ccdb91.md`)
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
pub(super) fn inline_lets(x: &Rc<Term>) -> Rc<Term> {
    pub(super) fn subst(t: &Rc<Term>, k: &TOp, v: &Rc<Term>) -> Rc<Term> {
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
pub(super) enum ChunkFold {
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
