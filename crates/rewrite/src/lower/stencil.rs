//! Tiled stencils (`stencil c f x`, `rules::stencil`): one work-group per tile of outputs, one
//! work-item per output, the input tile with its halo copied into local memory by the group's
//! consecutive work-items (or read where it lies, unstaged), and the cost of each.
//!
//! The kernel, for two dimensions (`slide2d (a, b) (c, d)` is the user's `slide2d` with windows
//! `a`, step `b` along rows and `c`, `d` along columns):
//!
//! `toGlobal (join (mapWrg1 (λT. map (λz. join z) (transpose (mapWrg0 (λt.
//!    let l = toLocal (mapLcl1 (λr. mapLcl0 (λe. e) r) t) in
//!    mapLcl1 (λr. mapLcl0 f r) (slide2d (n1, s1) (n0, s0) l)) T)))
//!  (slide2d ((u1-1)·s1+n1, u1·s1) ((u0-1)·s0+n0, u0·s0) x)))`
//!
//! one level fewer in one dimension and one more in three (the rows of a tile's planes joined
//! back into the result's rows, as `rules::stencil` writes). A column (`host_column`) maps
//! strips instead: `mapGlb` per dimension, each work-item `v` outputs from its strip held in
//! private memory (a 3-D block: `v` planes × `w` rows); a zipped stencil's column maps the zip
//! of its strips and its grids' `v` points (`zip x g…` as the node's array, the windows' place
//! among them in `zipped`).

use super::*;
use crate::cost::stencil;
use crate::stencil_sizes::StencilTile;

impl Lowerer<'_> {
    /// `λv. body(v)` with a fresh variable named after `base`.
    fn lam1(&mut self, base: &str, body: impl FnOnce(&mut Self, ExprId) -> ExprId) -> ExprId {
        let n = self.name(base);
        let v = self.b.bind(&n);
        let e = self.b.var(v);
        let b = body(self, e);
        self.b.unbind(v);
        self.b.lambda(vec![v], b)
    }

    fn slide(&mut self, (n, s): (i64, i64), x: ExprId) -> ExprId {
        self.b
            .prim(Prim::Slide(arith::ArithExpr::cst(n), arith::ArithExpr::cst(s)), vec![x])
    }

    /// The windows `w[d] = (size, step)` of `x` in `w.len()` dimensions, nested as users write
    /// `slide2d` and `slide3d` (every window's elements indexed outermost dimension first).
    fn slide_nd(&mut self, w: &[(i64, i64)], x: ExprId) -> ExprId {
        match w.len() {
            1 => self.slide(w[0], x),
            2 => {
                let inner = w[1];
                let f = self.lam1("r", |me, r| me.slide(inner, r));
                let rows = self.b.prim(Prim::Map(MapKind::Plain), vec![f, x]);
                let sl = self.slide(w[0], rows);
                let tr = self.lam1("p", |me, p| me.b.prim(Prim::Transpose, vec![p]));
                self.b.prim(Prim::Map(MapKind::Plain), vec![tr, sl])
            }
            _ => {
                let rest = [w[1], w[2]];
                let f = self.lam1("q", |me, q| me.slide_nd(&rest, q));
                let planes = self.b.prim(Prim::Map(MapKind::Plain), vec![f, x]);
                let sl = self.slide(w[0], planes);
                let reorder = self.lam1("w", |me, wv| {
                    let t = me.b.prim(Prim::Transpose, vec![wv]);
                    let tr = me.lam1("p", |me, p| me.b.prim(Prim::Transpose, vec![p]));
                    me.b.prim(Prim::Map(MapKind::Plain), vec![tr, t])
                });
                self.b.prim(Prim::Map(MapKind::Plain), vec![reorder, sl])
            }
        }
    }

    /// `mapLcl(d-1) (λ… mapLcl0 g …) x`: `g` over the `d`-dimensional `x`, one work-item each.
    /// With `joined`, the innermost map's result is joined (`λr. join (map f r)`).
    fn lcl_nd(&mut self, d: usize, g: ExprId, x: ExprId, joined: bool) -> ExprId {
        if d == 1 {
            let m = self.b.prim(Prim::Map(MapKind::Lcl(0)), vec![g, x]);
            return if joined { self.b.prim(Prim::Join, vec![m]) } else { m };
        }
        let inner = self.lam1("r", |me, r| me.lcl_nd(d - 1, g, r, joined));
        self.b.prim(Prim::Map(MapKind::Lcl((d - 1) as u8)), vec![inner, x])
    }

    /// `map (λz. join z) (transpose x)`: a row of tiles' results as rows of the result.
    fn rows_of_tiles(&mut self, x: ExprId) -> ExprId {
        let t = self.b.prim(Prim::Transpose, vec![x]);
        let j = self.join_fn();
        self.b.prim(Prim::Map(MapKind::Plain), vec![j, t])
    }

    /// `xs` as one array: itself alone, else their `zip`.
    fn zip_all(&mut self, xs: Vec<ExprId>) -> ExprId {
        if xs.len() == 1 {
            xs[0]
        } else {
            self.b.prim(Prim::Zip, xs)
        }
    }

    /// The `m` components of the tuple `t` (`t` itself when `m` is 1).
    fn parts(&mut self, t: ExprId, m: usize) -> Vec<ExprId> {
        if m == 1 {
            return vec![t];
        }
        (0..m).map(|i| self.b.op(Op::Get(i as u8), vec![t])).collect()
    }

    /// The array below a stencil's windows and, for a zipped one (`zip x g…`), its grids.
    fn stencil_arrays<'t>(st: &StencilTile, x: &'t Rc<Term>) -> (&'t Rc<Term>, &'t [Rc<Term>]) {
        if st.zipped > 0 && !x.kids.is_empty() {
            (&x.kids[0], &x.kids[1..])
        } else {
            (x, &[])
        }
    }

    /// The kernel of a tiled stencil (see the module docs) and its cost.
    pub(super) fn host_stencil(&mut self, t: &Rc<Term>, c: i64) -> Out {
        let st = StencilTile::unpack(c);
        if st.column > 1 {
            return self.host_column(t, &st);
        }
        let (f, x) = (&t.kids[1], &t.kids[2]);
        let dims = st.dims;
        let windows: Vec<(i64, i64)> = (0..dims).map(|d| (st.n[d], st.s[d])).collect();
        let tiles: Vec<(i64, i64)> = (0..dims).map(|d| (st.extent(d), st.u[d] * st.s[d])).collect();
        let (xt, xc, bind) = self.kernel_arg(x);
        let (g, gc) = self.func(f, st.n[0] as f64);
        let tiled = self.slide_nd(&tiles, xt);
        // the body of a work-group: its tile of outputs
        let body = self.lam1("tile", |me, tile| {
            let src = if st.staged {
                let id = me.lam1("e", |_, e| e);
                let copy = me.lcl_nd(dims, id, tile, false);
                Some(me.b.to(AddressSpace::Local, copy))
            } else {
                None
            };
            match src {
                Some(staged) => {
                    let n = me.name("l");
                    let lv = me.b.bind(&n);
                    let le = me.b.var(lv);
                    let w = me.slide_nd(&windows, le);
                    let out = me.lcl_nd(dims, g, w, st.joined);
                    me.b.unbind(lv);
                    me.b.let_(lv, staged, out)
                }
                None => {
                    let w = me.slide_nd(&windows, tile);
                    me.lcl_nd(dims, g, w, st.joined)
                }
            }
        });
        let groups = match dims {
            1 => self.b.prim(Prim::Map(MapKind::Wrg(0)), vec![body, tiled]),
            2 => {
                let row = self.lam1("trow", |me, tr| {
                    let r = me.b.prim(Prim::Map(MapKind::Wrg(0)), vec![body, tr]);
                    me.rows_of_tiles(r)
                });
                self.b.prim(Prim::Map(MapKind::Wrg(1)), vec![row, tiled])
            }
            _ => {
                let plane = self.lam1("tplane", |me, tp| {
                    let row = me.lam1("trow", |me, tr| {
                        let r = me.b.prim(Prim::Map(MapKind::Wrg(0)), vec![body, tr]);
                        let t = me.b.prim(Prim::Transpose, vec![r]);
                        let each = me.lam1("a", |me, a| me.rows_of_tiles(a));
                        me.b.prim(Prim::Map(MapKind::Plain), vec![each, t])
                    });
                    let r = me.b.prim(Prim::Map(MapKind::Wrg(1)), vec![row, tp]);
                    me.rows_of_tiles(r)
                });
                self.b.prim(Prim::Map(MapKind::Wrg(2)), vec![plane, tiled])
            }
        };
        let joined = self.b.prim(Prim::Join, vec![groups]);
        let e = self.b.to(AddressSpace::Global, joined);
        self.notes.push(format!(
            "stencil tiles of {} outputs, {}",
            st.name().trim_end_matches("/global"),
            if st.staged {
                "input tile and halo in local memory"
            } else {
                "read from global memory"
            }
        ));
        let cost = self.stencil_cost(&st, t, gc);
        (self.wrap(bind, e), xc + cost)
    }

    /// The cost of a tiled stencil (see `cost::stencil`).
    fn stencil_cost(&self, st: &StencilTile, t: &Term, gc: f64) -> f64 {
        let points = self.stencil_points(st.dims, t);
        let items = (points / self.lanes).ceil();
        let group = st.group() as f64;
        let under = if group < 64.0 { 2.0 } else { 1.0 };
        let window = st.window_elems() as f64;
        let per_item = if st.staged {
            stencil::STAGED_BARRIERS + window * stencil::LOCAL_WINDOW_READ
        } else {
            GROUP_END_BARRIER
        };
        let traffic = if st.staged { stencil::STAGED_TRAFFIC } else { 1.0 };
        items * (gc * under + per_item) + points * MEM * traffic + LAUNCH
    }

    /// Outputs of a stencil of `dims` dimensions whose result (or windows) is `t`: `Term`
    /// knows two lengths, and a third dimension is taken as long as the second (a cube, or
    /// hotspot3D's 512×512 planes).
    fn stencil_points(&self, dims: usize, t: &Term) -> f64 {
        let (outer, inner) = (self.len(t), self.eval(t.inner.as_ref()));
        match dims {
            1 => outer,
            2 => outer * inner,
            _ => outer * inner * inner,
        }
    }

    /// `mapSeqUnroll(d-1) (λ… mapSeqUnroll g …) x`.
    fn unrolled_nd(&mut self, d: usize, g: ExprId, x: ExprId) -> ExprId {
        if d == 1 {
            return self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![g, x]);
        }
        let inner = self.lam1("r", |me, r| me.unrolled_nd(d - 1, g, r));
        self.b.prim(Prim::Map(MapKind::SeqUnroll), vec![inner, x])
    }

    /// A stencil whose work-items each compute `v = st.column` outputs down the outermost
    /// dimension from their strip of the input copied into private memory (`rules::stencil`'s
    /// second equation): `toGlobal (join (mapGlb(d-1) (λS. reorder (mapGlb(d-2) … (λs.
    /// let p = toPrivate (copy s) in join? (mapSeqUnroll f (join (slide^d p)))) S)) (strips x)))`,
    /// `reorder` moving each work-item's column of `v` outputs outermost.
    fn host_column(&mut self, t: &Rc<Term>, st: &StencilTile) -> Out {
        let f = &t.kids[1];
        let (x, grids) = Self::stencil_arrays(st, &t.kids[2]);
        let dims = st.dims;
        let v = st.column;
        // a 3-D block's rows of each plane (`w` in `rules::stencil`'s block equation; one otherwise)
        let brows = if dims == 3 { st.u[1].max(1) } else { 1 };
        let windows: Vec<(i64, i64)> = (0..dims).map(|d| (st.n[d], st.s[d])).collect();
        let mut strip = windows.clone();
        strip[0] = (st.extent(0), v * st.s[0]);
        if brows > 1 {
            strip[1] = (st.extent(1), brows * st.s[1]);
        }
        let (xt, mut xc, mut bind) = self.kernel_arg(x);
        // a zipped grid's `v` points down each column: `(v, v)` windows outermost, one point
        // along the other dimensions
        // (a block's `(w, w)` rows next)
        let piece: Vec<(i64, i64)> = (0..dims)
            .map(|d| match d {
                0 => (v, v),
                1 => (brows, brows),
                _ => (1, 1),
            })
            .collect();
        let mut arrays = vec![];
        for gr in grids {
            let (ge, c, b) = self.kernel_arg(gr);
            xc += c;
            bind.extend(b);
            arrays.push(self.slide_nd(&piece, ge));
        }
        let m = 1 + arrays.len();
        let (g, gc) = self.func(f, st.n[0] as f64);
        arrays.insert(0, self.slide_nd(&strip, xt));
        // a zipped 3-D stencil zips its arrays' rows of strips (`join`) and cuts them back into
        // planes (`split`): a plane's rows picked out of a zip by `get` would be bound (and
        // stored) by the parser's `let`s before their `mapGlb1`
        let rows_len = grids
            .first()
            .and_then(|g| g.inner.clone())
            .filter(|_| dims == 3)
            .map(|y| y.div_assume_exact(&arith::ArithExpr::cst(brows)));
        let strips = match &rows_len {
            Some(y) => {
                let joined: Vec<ExprId> = arrays.into_iter().map(|a| self.b.prim(Prim::Join, vec![a])).collect();
                let z = self.zip_all(joined);
                self.b.prim(Prim::Split(y.clone()), vec![z])
            }
            None => self.zip_all(arrays),
        };
        let body = self.lam1("strip", |me, sp| {
            let mut parts = me.parts(sp, m);
            let s = parts.remove(0);
            let id = me.lam1("e", |_, e| e);
            let copy = me.unrolled_nd(dims, id, s);
            let private = me.b.to(AddressSpace::Private, copy);
            let n = me.name("p");
            let pv = me.b.bind(&n);
            let pe = me.b.var(pv);
            let w = me.slide_nd(&windows, pe);
            // the strip's windows: `v` along the outermost dimension, one along the others
            let mut cols = vec![w];
            cols.extend(parts);
            for c in cols.iter_mut() {
                for _ in 1..dims {
                    *c = me.b.prim(Prim::Join, vec![*c]);
                }
            }
            // the window back at its place among the grids' points
            let w = cols.remove(0);
            cols.insert((st.zipped.max(1) - 1) as usize, w);
            let col = me.zip_all(cols);
            let out = me.b.prim(Prim::Map(MapKind::SeqUnroll), vec![g, col]);
            let out = if st.joined {
                me.b.prim(Prim::Join, vec![out])
            } else {
                out
            };
            // a block's `v × brows` outputs, plane by plane
            let out = if brows > 1 {
                me.b.prim(Prim::Split(arith::ArithExpr::cst(brows)), vec![out])
            } else {
                out
            };
            me.b.unbind(pv);
            me.b.let_(pv, private, out)
        });
        // each level of a zipped stencil's maps zips its arrays' rows
        let zipped_planes = rows_len.is_none();
        let groups = match dims {
            2 => {
                let row = self.lam1("srow", |me, sr| {
                    let rows = me.parts(sr, m);
                    let sr = me.zip_all(rows);
                    let r = me.b.prim(Prim::Map(MapKind::Glb(0)), vec![body, sr]);
                    me.b.prim(Prim::Transpose, vec![r])
                });
                self.b.prim(Prim::Map(MapKind::Glb(1)), vec![row, strips])
            }
            _ => {
                let plane = self.lam1("splane", |me, sp| {
                    let row = me.lam1("srow", |me, sr| {
                        let rows = me.parts(sr, m);
                        let sr = me.zip_all(rows);
                        me.b.prim(Prim::Map(MapKind::Glb(0)), vec![body, sr])
                    });
                    let sp = if zipped_planes {
                        let planes = me.parts(sp, m);
                        me.zip_all(planes)
                    } else {
                        sp
                    };
                    let r = me.b.prim(Prim::Map(MapKind::Glb(1)), vec![row, sp]);
                    if brows > 1 {
                        // rows of blocks `[X][v][w]` to `[v][w][X]`, their planes `[v][Y][X]`
                        let tr = me.lam1("a", |me, a| {
                            let t = me.b.prim(Prim::Transpose, vec![a]);
                            let inner = me.lam1("b", |me, b| me.b.prim(Prim::Transpose, vec![b]));
                            me.b.prim(Prim::Map(MapKind::Plain), vec![inner, t])
                        });
                        let r = me.b.prim(Prim::Map(MapKind::Plain), vec![tr, r]);
                        let r = me.b.prim(Prim::Transpose, vec![r]);
                        let j = me.join_fn();
                        return me.b.prim(Prim::Map(MapKind::Plain), vec![j, r]);
                    }
                    let tr = me.lam1("a", |me, a| me.b.prim(Prim::Transpose, vec![a]));
                    let r = me.b.prim(Prim::Map(MapKind::Plain), vec![tr, r]);
                    me.b.prim(Prim::Transpose, vec![r])
                });
                self.b.prim(Prim::Map(MapKind::Glb(2)), vec![plane, strips])
            }
        };
        let joined = self.b.prim(Prim::Join, vec![groups]);
        let e = self.b.to(AddressSpace::Global, joined);
        let block = if brows > 1 {
            format!("{v}x{brows}")
        } else {
            v.to_string()
        };
        self.notes.push(format!(
            "stencil columns of {block} outputs a work-item, its strip of the input in private memory"
        ));
        let points = self.stencil_points(dims, t);
        let outs = (v * brows) as f64;
        let items = (points / outs / self.lanes).ceil();
        let held = (strip.iter().map(|&(n, _)| n).product::<i64>()) as f64;
        // per work-item: its outputs and its strip's loads, and its traffic (`cost::stencil`)
        let traffic = stencil::COLUMN_TRAFFIC * (1.0 + grids.len() as f64 * stencil::ZIPPED_GRID_TRAFFIC);
        let cost = items * (outs * gc + held * stencil::STRIP_LOAD) + points / outs * MEM * traffic + LAUNCH;
        (self.wrap(bind, e), xc + cost)
    }

    /// A tiled stencil inside a work-item: the plain map over the windows, sequential.
    pub(super) fn seq_stencil(&mut self, t: &Rc<Term>, c: i64) -> Out {
        let st = StencilTile::unpack(c);
        let f = &t.kids[1];
        let (x, grids) = Self::stencil_arrays(&st, &t.kids[2]);
        let windows: Vec<(i64, i64)> = (0..st.dims).map(|d| (st.n[d], st.s[d])).collect();
        let (xe, mut xc) = self.seq(x);
        let mut arrays = vec![];
        for gr in grids {
            let (ge, c) = self.seq(gr);
            xc += c;
            arrays.push(ge);
        }
        let (g, gc) = self.func(f, st.n[0] as f64);
        let w = self.slide_nd(&windows, xe);
        arrays.insert((st.zipped.max(1) - 1) as usize, w);
        let e = self.seq_nd(st.dims, g, arrays, st.joined);
        let points = self.len(t) * self.eval(t.inner.as_ref()).powi(st.dims as i32 - 1);
        (e, xc + points * (gc + 1.0))
    }

    /// `mapSeq(λ… mapSeq g …)` over the zip of `xs` at each of `d` levels (`xs` one array:
    /// itself).
    fn seq_nd(&mut self, d: usize, g: ExprId, xs: Vec<ExprId>, joined: bool) -> ExprId {
        let m = xs.len();
        let x = self.zip_all(xs);
        if d == 1 {
            let r = self.b.prim(Prim::Map(MapKind::Seq), vec![g, x]);
            return if joined { self.b.prim(Prim::Join, vec![r]) } else { r };
        }
        let inner = self.lam1("r", |me, r| {
            let rows = me.parts(r, m);
            me.seq_nd(d - 1, g, rows, joined)
        });
        self.b.prim(Prim::Map(MapKind::Seq), vec![inner, x])
    }
}
