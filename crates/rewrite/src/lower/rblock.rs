//! Register-blocked matrix products (`rblock`): work-group tiles copied into local memory,
//! register blocks per work-item, the batch form and the rows form, and their cost
//! (`Lowerer::rblock_cost`, with the occupancy model of `cost`).

use super::*;

/// `rblock c r g x ys` as the product it stands for: `map (λr. join (map g ys)) x`.
pub(super) fn rblock_as_map(t: &Rc<Term>) -> Rc<Term> {
    let (r, g, x, ys) = (&t.kids[1], &t.kids[2], &t.kids[3], &t.kids[4]);
    let row = Term::new(TOp::Map, vec![g.clone(), ys.clone()], ys.len.clone(), None);
    let row = Term::new(TOp::Join, vec![row], ys.len.clone(), None);
    let f = Term::new(TOp::Lam, vec![r.clone(), row], None, None);
    Term::new(TOp::Map, vec![f, x.clone()], t.len.clone(), t.inner.clone())
}

impl Lowerer<'_> {
    /// The parts of a dot product `λc. reduce f z (map h (zip r c))` (or `zip c r`): `f`, `z`,
    /// `h`, and whether `h` takes the column's element first.
    pub(super) fn dot_parts(&self, g: &Rc<Term>, r: &str) -> Option<(Symbol, Symbol, Symbol, bool)> {
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
    /// copied along the tile's rows: `bench/results/runs/nvidia-h200-2026-11-24-mm-speed2-2c9598c.md`).
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
    /// (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed4-0809ecf.md`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn flat_local_copy(
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
    pub(super) fn vector_copy(&self, global: Option<&arith::ArithExpr>, run: i64, elems: i64, group: i64) -> bool {
        let known = global
            .and_then(|g| crate::sizes::estimate(g, self.sizes, 0))
            .is_some_and(|g| g > 0 && g % VEC == 0);
        known && run % VEC == 0 && elems % (VEC * group) == 0
    }

    /// Whether a register-blocked product copies the tiles of `x` and of `ys` as vectors
    /// (`vector_copy`), for its lowering (`host_rblock`) and its cost (`rblock_cost`).
    pub(super) fn rblock_tile_vectors(&self, rb: crate::sizes::RegBlockSizes, x: &Term, ys: &Term) -> (bool, bool) {
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
    pub(super) fn private_copy(&mut self, e: ExprId) -> ExprId {
        let id = self.id_fn();
        let copy = self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![id, e]);
        self.b.to(AddressSpace::Private, copy)
    }

    /// `λx. x`.
    pub(super) fn id_fn(&mut self) -> ExprId {
        let x = self.name("x");
        let xv = self.b.bind(&x);
        let xe = self.b.var(xv);
        self.b.unbind(xv);
        self.b.lambda(vec![xv], xe)
    }

    /// `map kind (λv. body v) e` with `body` building the function's body from its parameter.
    pub(super) fn map_with(
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
    pub(super) fn rblock_rank1(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
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
    pub(super) fn rblock_update(
        &mut self,
        rows: ExprId,
        bpv: VarId,
        fs: &Symbol,
        hs: &Symbol,
        swapped: bool,
    ) -> ExprId {
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
    pub(super) fn rblock_rank_vec(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
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
    pub(super) fn rblock_rank1_kmajor(&mut self, fs: &Symbol, hs: &Symbol, swapped: bool) -> ExprId {
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

    /// `rblock c r g x ys` (see `rules::regblock::RegBlock`), as `bench/mm_regblock.lisp` is written,
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
    pub(super) fn host_rblock(&mut self, t: &Rc<Term>, rb: crate::sizes::RegBlockSizes) -> Out {
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

/// `rblock c r g x ys` written without `join` (`sizes::RBLOCK_ROWS`) as the product it stands
/// for: `map (λr. map g ys) x`.
pub(super) fn rblock_rows_as_map(t: &Rc<Term>) -> Rc<Term> {
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
    pub(super) fn host_rblock_rows(&mut self, t: &Rc<Term>, c: i64) -> Out {
        let sizes = c & !crate::sizes::RBLOCK_ROWS;
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
    /// `map (λab. rblock c r g x ys) xs` with `RBLOCK_BATCH` in `c` (`batch-reg-block-*`): the
    /// batch is the third dimension of the grid, `mapWrg2 (λab. P) xs`, `P` the register-blocked
    /// product of the batch element (`host_rblock`: `mapWrg1 × mapWrg0` over its tiles), its
    /// `x` and `ys` read from `ab` through the `let`s that bound them (`transpose (get 1 ab)`).
    /// The source's leaves of `x` and `ys` (`get #0 ab`) are bound to variables at the top of
    /// the batch element's function: a `get` deep inside would be `let`-bound where it is read
    /// (as the reader binds what may be existential), and so would everything built on it,
    /// and a `let` whose body maps its variable is a copy at work-group level for `validate`.
    pub(super) fn host_batch_rblock(&mut self, t: &Rc<Term>) -> Option<Out> {
        let (f, xs) = match t.op {
            TOp::Map => (&t.kids[0], &t.kids[1]),
            _ => return None,
        };
        let body = f.kids.get(1).filter(|_| f.op == TOp::Lam)?;
        let TOp::RBlock(c) = body.op else { return None };
        if c & crate::sizes::RBLOCK_BATCH == 0 {
            return None;
        }
        let c = c & !crate::sizes::RBLOCK_BATCH;
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
        let rb = crate::sizes::RegBlockSizes::unpack(c);
        let (rows_n, cols_n, k_len) = (self.len(&x), self.len(&ys), self.eval(x.inner.as_ref()));
        let cost = if c & crate::sizes::RBLOCK_MMA != 0 {
            self.mma_cost(rb, batch * rows_n * cols_n, k_len, &x, &ys)
        } else {
            self.rblock_cost(rb, batch * rows_n * cols_n, k_len, &x, &ys)
        };
        Some((self.wrap(bind, e), xsc + cost))
    }

    /// `t` with each opaque leaf copied from the source (`get #0 ab`) replaced by a fresh
    /// variable, bound (still in scope) to the leaf's copy and pushed on `bound`.
    pub(super) fn bind_leaves(&mut self, t: &Rc<Term>, bound: &mut Vec<(VarId, ExprId)>) -> Rc<Term> {
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
    /// groups of 128 first (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed3-10001e0.md`).
    pub(super) fn rblock_cost(
        &self,
        rb: crate::sizes::RegBlockSizes,
        outputs: f64,
        k_len: f64,
        x: &Term,
        ys: &Term,
    ) -> f64 {
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
