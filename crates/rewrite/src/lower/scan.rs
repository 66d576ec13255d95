//! Scans: `scanglb` as one `scanGlb` launch (a map before it read inline, `mapscan`'s map after
//! it applied as it stores), `scanrows` as `map (λr. scanGlb f z r) xss` (every row in the same
//! launch), and every scan inside a work-item as `scanSeq`. A high-level `scan` left at host
//! level is the same launch (code generation's default lowering of `scan`).
//!
//! Cost: the kernel runs tiles of `SCAN_TILE` elements (`SCAN_ROW_TILE` in a scan of rows),
//! `SCAN_WG` work-items each; the groups that run at once (`lanes / SCAN_WG`) each pay a tile's
//! element work (two applications of the operator and four local-memory accesses an element:
//! the tile goes through local memory on its way in and out of registers) and its fixed part
//! (barriers and the look-back), and every element is written once (`MEM`). A row shorter than
//! a tile still pays a whole tile, so short rows go to one work-item each (`map` with
//! `scanSeq`, the default), whose rows are read a row apart (`row_reads`).

use super::*;

/// Elements of a tile of `scanGlb` for 4-byte elements (256 work-items × 16 elements, × 32 in a
/// scan of rows; `codegen_opencl`'s `gen/scan/glb.rs`).
const SCAN_TILE: f64 = 4096.0;
const SCAN_ITEMS: f64 = 16.0;
const SCAN_ROW_TILE: f64 = 8192.0;
const SCAN_ROW_ITEMS: f64 = 32.0;
const SCAN_WG: f64 = 256.0;
/// A tile's fixed part: its eight barriers and a look-back of a trip or two, shared by the
/// tile's elements a work-item, counted as 4 barriers of `BARRIER_WARP` (an estimate, not
/// fitted: the H200 measurement of the kernel is `bench/results/scan-nvidia-h200-2026-12-02.md`).
const SCAN_TILE_FIXED: f64 = 4.0 * BARRIER_WARP;
/// An element of a row that one work-item scans whole, read or written a row away from its
/// neighbour's: twice `ROW_STRIDED` (rows longer than a stageable one are not reused from the
/// cache as the staged rows `row_reads` prices are; an estimate, not fitted).
const SCAN_ROW_STRIDED: f64 = 2.0 * ROW_STRIDED;

impl Lowerer<'_> {
    /// The kernel's cost over `tiles` tiles, the operator costing `fc` (applied twice an
    /// element) and a map read inline `gc` (once).
    fn scan_kernel_cost(&self, tiles: f64, items: f64, fc: f64, gc: f64) -> f64 {
        let groups = (self.lanes / SCAN_WG).max(1.0);
        (tiles / groups).ceil() * (items * (2.0 * fc + gc + 4.0 * LOCAL_READ) + SCAN_TILE_FIXED)
    }

    /// `xs` of a scan in one launch: `map g ys` with a leaf `g` over a value that computes
    /// nothing is read inline (its cost per element returned), anything else computed is an
    /// earlier kernel's `let`-bound result.
    fn scan_input(&mut self, x: &Rc<Term>) -> (ExprId, f64, f64, Vec<(VarId, ExprId)>) {
        if x.op == TOp::Map && matches!(x.kids[0].op, TOp::Sym(_)) && !self.computes(&x.kids[1]) {
            let (g, gc) = self.func(&x.kids[0], 1.0);
            let (y, yc) = self.seq(&x.kids[1]);
            self.notes.push("map fused before scanGlb".into());
            return (self.b.prim(Prim::Map(MapKind::Plain), vec![g, y]), yc, gc, Vec::new());
        }
        let (xt, xc, bind) = self.kernel_arg(x);
        (xt, xc, 0.0, bind)
    }

    /// `scanGlb f z xs` of `scanglb f z xs` (or `scan`), its cost, and the binding of a computed
    /// input (to wrap around whatever uses it).
    fn scan_glb_parts(&mut self, t: &Rc<Term>) -> (ExprId, f64, Vec<(VarId, ExprId)>) {
        let k = &t.kids;
        let n = self.len(&k[2]);
        let (x, xc, gc, bind) = self.scan_input(&k[2]);
        let (f, fc) = self.func(&k[0], 1.0);
        let (z, _) = self.seq(&k[1]);
        let e = self.b.prim(Prim::Scan(ScanKind::Glb), vec![f, z, x]);
        self.notes.push(format!("scanGlb over {n}"));
        let tiles = (n / SCAN_TILE).ceil();
        (
            e,
            xc + self.scan_kernel_cost(tiles, SCAN_ITEMS, fc, gc) + n * MEM + LAUNCH,
            bind,
        )
    }

    pub(super) fn host_scan(&mut self, t: &Rc<Term>) -> Out {
        let (e, c, bind) = self.scan_glb_parts(t);
        (self.wrap(bind, e), c)
    }

    /// `mapscan h s`: `mapGlb h (scanGlb …)`, which code generation makes one launch.
    pub(super) fn host_map_scan(&mut self, t: &Rc<Term>) -> Out {
        let s = &t.kids[1];
        if !matches!(s.op, TOp::ScanGlb | TOp::Scan) {
            let m = Term::new(TOp::Map, t.kids.clone(), t.len.clone(), t.inner.clone());
            return self.host(&m);
        }
        let n = self.len(s);
        let (scan, c, bind) = self.scan_glb_parts(s);
        let (h, hc) = self.func(&t.kids[0], 1.0);
        self.notes.push("map fused after scanGlb".into());
        let e = self.b.prim(Prim::Map(MapKind::Glb(0)), vec![h, scan]);
        (self.wrap(bind, e), c + (n / self.lanes).ceil() * hc)
    }

    /// `scanrows f z xss` (`xss` possibly `map (mapf g) yss`): `map (λr. scanGlb f z r) xss`.
    pub(super) fn host_scan_rows(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        let x = &k[2];
        let (g, rows_in) = match (&x.op, x.kids.first().map(|f| &f.op)) {
            (TOp::Map, Some(TOp::MapF))
                if matches!(x.kids[0].kids[0].op, TOp::Sym(_)) && !self.computes(&x.kids[1]) =>
            {
                (Some(x.kids[0].kids[0].clone()), &x.kids[1])
            }
            _ => (None, x),
        };
        let rows = self.len(rows_in);
        let m = self.eval(rows_in.inner.as_ref());
        let (xt, xc, bind) = self.kernel_arg(rows_in);
        let r = self.name("r");
        let rv = self.b.bind(&r);
        let re = self.b.var(rv);
        let (input, gc) = match &g {
            Some(g) => {
                let (ge, gc) = self.func(g, 1.0);
                (self.b.prim(Prim::Map(MapKind::Plain), vec![ge, re]), gc)
            }
            None => (re, 0.0),
        };
        let (f, fc) = self.func(&k[0], 1.0);
        let (z, _) = self.seq(&k[1]);
        let scan = self.b.prim(Prim::Scan(ScanKind::Glb), vec![f, z, input]);
        self.b.unbind(rv);
        let lam = self.b.lambda(vec![rv], scan);
        let e = self.b.prim(Prim::Map(MapKind::Plain), vec![lam, xt]);
        self.notes.push(format!("scanGlb of {rows} rows of {m} in one launch"));
        let tiles = rows * (m / SCAN_ROW_TILE).ceil().max(1.0);
        let cost = xc + self.scan_kernel_cost(tiles, SCAN_ROW_ITEMS, fc, gc) + rows * m * MEM + LAUNCH;
        (self.wrap(bind, e), cost)
    }

    /// Extra cost of a kernel whose `threads` work-items each scan a whole row with `scanSeq`
    /// (`f` the row function, or `mapf` of it): neighbouring work-items read and write
    /// addresses a row apart, each load and store touching a memory segment of its own
    /// (`SCAN_ROW_STRIDED` an element). Short rows stay
    /// cheaper this way than in tiles of `SCAN_ROW_TILE` elements, long ones do not.
    pub(super) fn scan_row_reads(&self, f: &Term, threads: f64) -> f64 {
        let f = if f.op == TOp::MapF { &f.kids[0] } else { f };
        if f.op != TOp::Lam || !matches!(f.kids[1].op, TOp::Scan | TOp::ScanGlb) {
            return 0.0;
        }
        let m = self.len(&f.kids[1]);
        (threads / self.lanes).ceil() * m * 2.0 * SCAN_ROW_STRIDED
    }

    /// A scan inside a work-item: `scanSeq`; `scanrows` and `mapscan` as the maps they equal.
    pub(super) fn seq_scan(&mut self, t: &Rc<Term>) -> Out {
        let k = &t.kids;
        match t.op {
            TOp::ScanRows => {
                let x = &k[2];
                let (g, rows_in) = match (&x.op, x.kids.first().map(|f| &f.op)) {
                    (TOp::Map, Some(TOp::MapF)) => (Some(x.kids[0].kids[0].clone()), x.kids[1].clone()),
                    _ => (None, x.clone()),
                };
                let mut r = sym(&self.name("r"));
                if let Some(rt) = Rc::get_mut(&mut r) {
                    rt.len = rows_in.inner.clone();
                }
                let input = match g {
                    Some(g) => Term::new(TOp::Map, vec![g, r.clone()], rows_in.inner.clone(), None),
                    None => r.clone(),
                };
                let scan = Term::new(
                    TOp::Scan,
                    vec![k[0].clone(), k[1].clone(), input],
                    rows_in.inner.clone(),
                    None,
                );
                let lam = Term::new(TOp::Lam, vec![r, scan], None, None);
                let m = Term::new(TOp::Map, vec![lam, rows_in.clone()], t.len.clone(), t.inner.clone());
                self.seq(&m)
            }
            TOp::MapScan => {
                let m = Term::new(TOp::Map, k.clone(), t.len.clone(), t.inner.clone());
                self.seq(&m)
            }
            _ => {
                let n = self.len(&k[2]);
                let (f, fc) = self.func(&k[0], 1.0);
                let (z, _) = self.seq(&k[1]);
                let (x, xc) = self.seq(&k[2]);
                (
                    self.b.prim(Prim::Scan(ScanKind::Seq), vec![f, z, x]),
                    xc + n * (fc + 1.0),
                )
            }
        }
    }
}
