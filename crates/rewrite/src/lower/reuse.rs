//! Local-memory reuse of an array every work-item reads whole (`tiles`): the group walks it
//! tile by tile, each work-item folding each element into one or more rows' results.

use super::*;

/// The first reduction over an array read in tiles (`rules::staging::reuse_rules`) that a row
/// function's body computes itself: not inside a function of it, and bound by nothing inside
/// the body (the work-group's tile loop runs outside the row function).
pub(super) fn tiled_reduce(t: &Rc<Term>) -> Option<Rc<Term>> {
    match t.op {
        TOp::Reduce if t.kids[2].op == TOp::Map && matches!(t.kids[2].kids[1].op, TOp::Tiles(..)) => Some(t.clone()),
        TOp::Lam | TOp::MapF | TOp::ReduceF | TOp::ReduceFU | TOp::Comp | TOp::Let => None,
        _ => t.kids.iter().find_map(tiled_reduce),
    }
}

/// `t` with the subterm `old` (by identity) replaced by `new`.
pub(super) fn replace(t: &Rc<Term>, old: &Rc<Term>, new: &Rc<Term>) -> Rc<Term> {
    if Rc::ptr_eq(t, old) {
        return new.clone();
    }
    let kids: Vec<Rc<Term>> = t.kids.iter().map(|k| replace(k, old, new)).collect();
    Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
}

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
    pub(super) fn host_reuse(&mut self, t: &Rc<Term>) -> Option<Out> {
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
    pub(super) fn split_rows(&mut self, rb: i64, x: ExprId) -> ExprId {
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
    pub(super) fn rows_fold(
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
