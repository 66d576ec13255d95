//! Column-block reductions (`colreduce`): work-groups of columns × row chunks reading rows of
//! the stored matrix, and the second kernel of their groups' partial results.

use super::*;

/// `colreduce bc r g f xs` as the `map f xs` it equals.
pub(super) fn as_map(t: &Rc<Term>) -> Rc<Term> {
    Term::new(TOp::Map, t.kids[3..].to_vec(), t.len.clone(), t.inner.clone())
}

/// The reductions `t` computes at its own level (not inside its functions).
pub(super) fn reductions(t: &Term) -> usize {
    let own = usize::from(matches!(t.op, TOp::Reduce | TOp::ReduceU | TOp::WgReduce(_)));
    own + t
        .kids
        .iter()
        .filter(|k| !is_fun(k))
        .map(|k| reductions(k))
        .sum::<usize>()
}

/// The kid indices from `t` down to its one reduction (see [`reductions`]).
pub(super) fn reduction_path(t: &Term) -> Option<Vec<usize>> {
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
pub(super) fn replace_at(t: &Rc<Term>, path: &[usize], by: &Rc<Term>) -> Rc<Term> {
    let Some((&i, rest)) = path.split_first() else {
        return by.clone();
    };
    let mut kids = t.kids.clone();
    kids[i] = replace_at(&t.kids[i], rest, by);
    Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone())
}

/// The reduction a column block splits: `reduce f z (map h data)`, or `reduce f z data`.
pub(super) struct ColRed<'t> {
    pub(super) f: &'t Rc<Term>,
    pub(super) z: &'t Rc<Term>,
    pub(super) h: Option<&'t Rc<Term>>,
    pub(super) data: &'t Rc<Term>,
}

impl Lowerer<'_> {
    /// `colreduce bc r g (λc. B[reduce f z (map h D)]) xs` (see `rules::reductions::ColReduceRule`), `D`
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
    pub(super) fn host_colreduce(&mut self, t: &Rc<Term>, (bc, r, g): (i64, i64, i64), joined: bool) -> Out {
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
        let (xt, xc, bind) = self.kernel_arg_whole(xs);
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
        let cols = match bind.first() {
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
    pub(super) fn col_chunks(
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
