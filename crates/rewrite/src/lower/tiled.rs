//! 2-D work-group tiles (`tile-2d-*`, with `ktile-*` and `stage-local`) and the tiled
//! transpose (`ttile`): their kernels and costs.

use super::*;

/// The parts of a 2-D work-group tiling (see `rules::tiling::Tile2d`).
pub(super) struct Tiled {
    pub(super) xs: Rc<Term>,
    pub(super) ys: Rc<Term>,
    pub(super) t1: i64,
    pub(super) t0: i64,
    pub(super) big_r: String,
    pub(super) big_c: String,
    pub(super) z: String,
    pub(super) r: String,
    pub(super) g: Rc<Term>,
    pub(super) joined: bool,
    pub(super) stage_r: bool,
    pub(super) stage_c: bool,
    /// Accumulate the block over tiles of this length along the dot products.
    pub(super) ktile: Option<i64>,
}

/// `join (map (λR. map (λz. join z) (transpose (map (λC. map (λr. join? (map g C')) R')
/// (split t0 ys)))) (split t1 xs))` with `R'`, `C'` the tiles or their staged copies.
pub(super) fn tiled(t: &Rc<Term>) -> Option<Tiled> {
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

impl Lowerer<'_> {
    /// The body of a work-group of a K-tiled block: `reduceSeq` over pairs of tiles, each
    /// staged in local memory, accumulating into the block (local memory, one element per
    /// work-item), starting from `z`; `None` when `g` is not `λc. reduce f z (map h (zip r c))`.
    /// `R` and `C` (the tiles) and the row variable `r` must be in scope.
    pub(super) fn ktiled_body(&mut self, p: &Tiled, kt: i64) -> Option<ExprId> {
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

    pub(super) fn host_tiled(&mut self, p: &Tiled) -> Out {
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
        let compute = self.loop_waves((threads / self.lanes).ceil(), &p.g) * (gc * under + 1.0);
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
    pub(super) fn join_fn(&mut self) -> ExprId {
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
    pub(super) fn strided_rows(&mut self, f: ExprId, tile: ExprId, rows: i64) -> ExprId {
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
    pub(super) fn unstrided(&mut self, x: ExprId) -> ExprId {
        let t = self.b.prim(Prim::Transpose, vec![x]);
        self.b.prim(Prim::Join, vec![t])
    }

    /// `ttile k f m` (see `rules::tiling::TransposeTile`):
    /// `join (mapWrg1 (λrow. map (λz. join z) (transpose (mapWrg0 (λtile. let l = toLocal (copy
    /// tile) in unstrided (strided_rows f (transpose (unstrided l)))) row))) (transpose (map (λrb.
    /// transpose (map (split k) rb)) (split k m))))`: work-group `(J, I)` of `k × ttile_rows(k)`
    /// work-items copies the tile of rows `I` and columns `J` of `m` along its rows and writes it
    /// transposed along the rows of the result, `k / ttile_rows(k)` elements per work-item each
    /// way (more loads in flight per work-item than one element each; a `32 × 32` work-group
    /// is more than many GPUs take). The local tile's rows are padded by code generation, so
    /// the column reads of the transposed write do not conflict in local memory banks.
    pub(super) fn host_ttile(&mut self, t: &Rc<Term>, k: i64) -> Out {
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
}
