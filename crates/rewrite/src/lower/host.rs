//! The host level of a variant: `Lowerer::host` decides which kernel each computed value
//! becomes (a global map, a work-group map, one of the special forms of the rules: tiles,
//! register blocks, cooperative and grid reductions, column blocks, local-memory reuse) and
//! dispatches to the module that lowers that form.

use super::*;

impl Lowerer<'_> {
    /// Code at host level: a sequence of kernels.
    pub fn host(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        if let Some(p) = tiled(t) {
            return self.host_tiled(&p);
        }
        if let TOp::Stencil(c) = t.op {
            return self.host_stencil(t, c);
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
            if c & crate::sizes::RBLOCK_MMA != 0 {
                return self.host_mma(t, c);
            }
            if c & crate::sizes::RBLOCK_ROWS != 0 {
                return self.host_rblock_rows(t, c);
            }
            return self.host_rblock(t, crate::sizes::RegBlockSizes::unpack(c));
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
                        under * self.loop_waves((threads / self.lanes).ceil(), f) * (gc + GROUP_END_BARRIER)
                            + threads * MEM
                            + self.extra_writes(f, threads)
                            + self.strided(&f.kids[0], x)
                            + self.row_reads(x, threads)
                            + self.scan_row_reads(f, threads),
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
                        self.loop_waves((threads / self.lanes).ceil(), f) * gc
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
                        self.loop_waves(self.glb_waves(x, n), f) * gc
                            + n * MEM
                            + self.extra_writes(f, n)
                            + self.strided(f, x)
                            + self.row_reads(x, n)
                            + self.scan_row_reads(f, n),
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
            // a view of computed arrays: they are kernels of their own, the view is read where
            // it is used (bound whole, one work-item would store it)
            TOp::Let if self.read_only_view(&k[1]) => {
                let mut binds = vec![];
                let (view, kc) = self.view_of_kernels(&k[1], &mut binds, false);
                let (v, vc) = self.seq(&view);
                let x = self.b.bind(&Self::sym_name(&k[0]));
                let (b, bc) = self.host(&k[2]);
                self.b.unbind(x);
                let e = self.b.let_(x, v, b);
                (self.wrap(binds, e), kc + vc + bc)
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
            TOp::Scan | TOp::ScanGlb => self.host_scan(t),
            TOp::ScanRows => self.host_scan_rows(t),
            TOp::MapScan => self.host_map_scan(t),
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
