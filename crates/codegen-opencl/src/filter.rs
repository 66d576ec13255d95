//! The multi-kernel `filterGlb`: a count kernel, then an ordered scatter kernel.
//!
//! OpenCL 1.2 promises no forward progress between the work-groups of one launch, so no group
//! may wait for another (no decoupled look-back); the kernel boundary is the only synchronization
//! between groups. This is therefore reduce-then-scan in two launches:
//! 1. each work-group counts the elements that its range of tiles keeps;
//! 2. each work-group adds up the counts of the groups before it (at most `FILTER_MAX_GROUPS`
//!    ints, read from cache; a separate one-group scan launch took 0.07 ms at 10^8 elements on the
//!    H200, a third of a copy of the input), then walks its tiles in order, scanning each tile's flags in local memory and storing the
//!    kept elements; the last group writes the total length.
//!
//! The predicate is evaluated in both kernels instead of storing flags: that reads the input twice
//! but writes nothing extra, which is cheaper than a flag array on every device we know.
//!
//! A tile is `FILTER_WG * FILTER_ROUNDS` elements; work-item `l` holds elements `r * FILTER_WG + l`
//! for each round `r`. Reads are coalesced, and the kept elements of one round go to one
//! contiguous run of the output, so stores coalesce too. The flags of all rounds are packed into
//! one `ulong` (8 bits a round), so one work-group scan orders the whole tile: an exclusive prefix
//! over at most 255 work-items is at most 255 and never carries into the next round's field.

use super::{read_to_view, Bound, Dest, Gen, KernelCx, Level, Result};
use arith::{ArithExpr, Range};
use ir::{AddressSpace, ExprId, Type};
use memalloc::Role;
use std::rc::Rc;
use views::{Loc, Read, View};

/// The fixed spellings of the filter kernels' locals, reserved in the namer so that no other
/// name is spelled alike.
pub(super) const FIXED_NAMES: &[&str] = &[
    "f_a", "f_b", "f_base", "f_c", "f_e", "f_ex", "f_g", "f_i", "f_j", "f_l", "f_part", "f_pk", "f_pos", "f_r",
    "f_roff", "f_run", "f_runpre", "f_runsum", "f_s", "f_scan", "f_t", "f_t0", "f_t1", "f_y", "f_z",
];

/// Work-items per work-group of both filter kernels (a multiple of `SCAN_RUN`, at most 256 so
/// that 8-bit prefix fields cannot overflow).
const FILTER_WG: usize = 256;
/// Elements per work-item per tile, one 8-bit field each of the packed flags (at most 8).
const FILTER_ROUNDS: usize = 8;
/// Upper bound of the number of work-groups: large enough to fill a GPU several times over,
/// small enough that every scatter group can sum the counts before it (1024, 4096 and 8192 timed
/// within 2% of 2048 on the H200; 4 rounds instead of 8 made the scatter 14% slower).
const FILTER_MAX_GROUPS: usize = 2048;
/// Work-items whose packed flags one of the first `FILTER_WG / SCAN_RUN` work-items scans serially.
const SCAN_RUN: usize = 8;

impl Gen<'_> {
    /// `filterGlb p xs` into `dest` (see the module documentation).
    pub(super) fn filter_glb(&mut self, e: ExprId, p: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let n = self.len_of(xs)?;
        let cap = self.capacity(&n);
        let (wg, rounds) = (FILTER_WG, FILTER_ROUNDS);
        let tile = (wg * rounds) as i64;
        let tiles = cap.add(&ArithExpr::cst(tile - 1)).div(&ArithExpr::cst(tile));
        let maxg = FILTER_MAX_GROUPS as i64;
        let per = tiles.add(&ArithExpr::cst(maxg - 1)).div(&ArithExpr::cst(maxg));
        let groups = tiles.add(&per).sub(&ArithExpr::cst(1)).div(&per);
        // Not zeroed: every group writes its count before the scatter launch reads any. (Zeroing
        // it with clEnqueueFillBuffer also made Oclgrind 21.10 report the counts written by the
        // first kernel as uninitialized in the second.)
        let (counts_b, _) = self
            .alloc(
                "counts",
                &Type::array(Type::int(), groups.clone()),
                AddressSpace::Global,
                &[],
                Role::Temp,
            )
            .map_err(|m| self.err(e, m))?;
        let counts = self.mem.buffers[counts_b].name.clone();
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(e, "internal: filter without a length destination"))?;
        let len_loc = match len.write(&[]).map_err(|m| self.err(e, m.0))? {
            Loc::Plain(l) => l,
            Loc::Vector { .. } => return Err(self.err(e, "internal: vector length")),
        };

        // Kernel 1: count.
        self.filter_kernel(&groups);
        self.filter_tile_range(&per, &tiles);
        self.line("int f_c = 0;");
        self.open("for (int f_t = f_t0; f_t < f_t1; f_t += 1) {");
        self.line("#pragma unroll");
        self.open(&format!("for (int f_r = 0; f_r < {rounds}; f_r += 1) {{"));
        self.line(&format!("int f_e = f_t * {tile} + f_r * {wg} + f_l;"));
        let x = self.filter_elem(xs)?;
        let cond = self.filter_pred(p, x, &n)?;
        self.line(&format!("f_c += {cond};"));
        self.close();
        self.close();
        self.reduce_local("f_c");
        self.open("if (f_l == 0) {");
        self.line(&format!("{counts}[f_g] = f_part[0];"));
        self.close();
        let k1 = self.k.take().expect("set");
        self.finish_kernel(k1, e)?;

        // Kernel 2: ordered scatter.
        self.filter_kernel(&groups);
        let slots = wg + wg / SCAN_RUN;
        let runs = wg / SCAN_RUN;
        {
            let k = self.k.as_mut().expect("set");
            // Two of each, alternating between tiles, so the next tile's first writes cannot race
            // with the last reads of this one and a tile needs three barriers, not four.
            k.decls.push(format!("local ulong f_scan[{}];", 2 * slots));
            k.decls.push(format!("local ulong f_runsum[{}];", 2 * runs));
            k.decls.push(format!("local ulong f_runpre[{}];", 2 * runs));
            k.decls.push(format!("local int f_roff[{}];", 2 * (rounds + 1)));
        }
        self.filter_tile_range(&per, &tiles);
        self.line("int f_c = 0;");
        self.open(&format!("for (int f_i = f_l; f_i < f_g; f_i += {wg}) {{"));
        self.line(&format!("f_c += {counts}[f_i];"));
        self.close();
        self.reduce_local("f_c");
        self.line("int f_base = f_part[0];");
        self.open("if (f_l == 0 && f_g == (int)get_num_groups(0) - 1) {");
        self.line(&format!("{len_loc} = f_base + {counts}[f_g];"));
        self.close();
        let elem_ty = match self.cty(xs)? {
            Type::Array(t, _) => *t,
            t => return Err(self.err(xs, format!("internal: filter of {t}"))),
        };
        // The tile's elements stay in registers (one private array per scalar component, indexed
        // only in unrolled loops) between the predicate and the store.
        let x = self.filter_elem(xs)?;
        let read = x.read(&[]).map_err(|m| self.err(xs, m.0))?;
        let mut decls = vec![];
        let mut loads = vec![];
        let staged = self.stage(&read, &elem_ty, &mut decls, &mut loads)?;
        self.open("for (int f_t = f_t0; f_t < f_t1; f_t += 1) {");
        self.line("int f_b = (f_t - f_t0) & 1;");
        for d in &decls {
            self.line(d);
        }
        self.line("ulong f_pk = 0;");
        self.line("#pragma unroll");
        self.open(&format!("for (int f_r = 0; f_r < {rounds}; f_r += 1) {{"));
        self.line(&format!("int f_e = f_t * {tile} + f_r * {wg} + f_l;"));
        self.open(&format!("if (f_e < {n}) {{"));
        for l in &loads {
            self.line(l);
        }
        self.close();
        let cond = self.filter_pred(p, read_to_view(staged.clone(), &elem_ty), &n)?;
        self.line(&format!("f_pk |= (ulong){cond} << (8 * f_r);"));
        self.close();
        self.scan_tile(slots, runs, rounds);
        self.line("#pragma unroll");
        self.open(&format!("for (int f_r = 0; f_r < {rounds}; f_r += 1) {{"));
        self.open("if ((f_pk >> (8 * f_r)) & 1) {");
        self.line(&format!(
            "int f_pos = f_base + f_roff[f_b * {} + f_r] + (int)((f_ex >> (8 * f_r)) & 255);",
            rounds + 1
        ));
        let pos = ArithExpr::var("f_pos", Range::upto(cap.clone()));
        let loc = dest.view.write(&[pos]).map_err(|m| self.err(e, m.0))?;
        self.store(&loc, &staged, e)?;
        self.close();
        self.close();
        self.line(&format!("f_base += f_roff[f_b * {} + {rounds}];", rounds + 1));
        self.close();
        let k2 = self.k.take().expect("set");
        self.finish_kernel(k2, e)
    }

    /// Starts a filter kernel of `groups` work-groups of `FILTER_WG` work-items.
    fn filter_kernel(&mut self, groups: &ArithExpr) {
        let mut k = KernelCx::new(Level::Item);
        k.wrg = true;
        k.global[0] = Some(groups.clone());
        k.local[0] = Some(FILTER_WG);
        k.decls.push(format!("local int f_part[{FILTER_WG}];"));
        self.k = Some(k);
        self.line("int f_g = get_group_id(0);");
        self.line("int f_l = get_local_id(0);");
    }

    /// The tiles `[f_t0, f_t1)` of this work-group: `per` consecutive tiles, fewer in the last group.
    fn filter_tile_range(&mut self, per: &ArithExpr, tiles: &ArithExpr) {
        self.line(&format!("int f_t0 = f_g * {per};"));
        self.line(&format!("int f_t1 = min(f_t0 + {per}, {tiles});"));
    }

    /// Private arrays holding one element per round: their declarations, the statements loading
    /// element `f_e` into slot `f_r`, and the element as read from slot `f_r`.
    fn stage(&mut self, r: &Read, ty: &Type, decls: &mut Vec<String>, loads: &mut Vec<String>) -> Result<Read> {
        match (r, ty) {
            (Read::Tuple(rs), Type::Tuple(ts)) if rs.len() == ts.len() => Ok(Read::Tuple(
                rs.iter()
                    .zip(ts)
                    .map(|(r, t)| self.stage(r, t, decls, loads))
                    .collect::<Result<_>>()?,
            )),
            (Read::Expr(x), t) => {
                let name = self.fresh("x");
                let ct = self.struct_name(t)?;
                decls.push(format!("{ct} {name}[{FILTER_ROUNDS}];"));
                loads.push(format!("{name}[f_r] = {x};"));
                Ok(Read::Expr(format!("{name}[f_r]")))
            }
            (Read::Tuple(_), t) => Err(ir::Diagnostic::new(
                ir::Span::default(),
                format!("internal: tuple value of type {t}"),
            )),
        }
    }

    /// Exclusive scan of the packed flags `f_pk` over the work-group into `f_ex`, and the offsets
    /// of each round's run in the tile into `f_roff` (slot `rounds` holds the tile's total).
    /// The first `runs` work-items scan runs of `SCAN_RUN` work-items serially and then the run
    /// totals, so a tile costs three barriers (a Hillis–Steele scan costs 16); runs are padded by
    /// one slot so that those serial reads hit distinct local-memory banks.
    fn scan_tile(&mut self, slots: usize, runs: usize, rounds: usize) {
        let run = SCAN_RUN;
        let pad = run + 1;
        self.line(&format!("f_scan[f_b * {slots} + f_l + f_l / {run}] = f_pk;"));
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.open(&format!("if (f_l < {runs}) {{"));
        self.line("ulong f_a = 0;");
        self.line("#pragma unroll");
        self.open(&format!("for (int f_j = 0; f_j < {run}; f_j += 1) {{"));
        self.line(&format!("int f_s = f_b * {slots} + f_l * {pad} + f_j;"));
        self.line("ulong f_y = f_scan[f_s];");
        self.line("f_scan[f_s] = f_a;");
        self.line("f_a += f_y;");
        self.close();
        self.line(&format!("f_runsum[f_b * {runs} + f_l] = f_a;"));
        self.close();
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.open(&format!("if (f_l < {runs}) {{"));
        self.line("ulong f_a = 0;");
        self.line("#pragma unroll");
        self.open(&format!("for (int f_j = 0; f_j < {runs}; f_j += 1) {{"));
        self.line(&format!("f_a += (f_j < f_l) ? f_runsum[f_b * {runs} + f_j] : 0;"));
        self.close();
        self.line(&format!("f_runpre[f_b * {runs} + f_l] = f_a;"));
        // The totals are added unpacked: a round's total can be 256, one more than a field holds.
        self.open(&format!("if (f_l == {}) {{", runs - 1));
        self.line(&format!("ulong f_z = f_runsum[f_b * {runs} + f_l];"));
        self.line("int f_run = 0;");
        self.open(&format!("for (int f_r = 0; f_r < {rounds}; f_r += 1) {{"));
        self.line(&format!("f_roff[f_b * {} + f_r] = f_run;", rounds + 1));
        self.line("f_run += (int)((f_a >> (8 * f_r)) & 255) + (int)((f_z >> (8 * f_r)) & 255);");
        self.close();
        self.line(&format!("f_roff[f_b * {} + {rounds}] = f_run;", rounds + 1));
        self.close();
        self.close();
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.line(&format!(
            "ulong f_ex = f_runpre[f_b * {runs} + f_l / {run}] + f_scan[f_b * {slots} + f_l + f_l / {run}];"
        ));
    }

    /// Sum of `val` over the work-group, left in `f_part[0]` for every work-item.
    fn reduce_local(&mut self, val: &str) {
        self.line(&format!("f_part[f_l] = {val};"));
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.open(&format!("for (int f_s = {}; f_s > 0; f_s >>= 1) {{", FILTER_WG / 2));
        self.open("if (f_l < f_s) {");
        self.line("f_part[f_l] += f_part[f_l + f_s];");
        self.close();
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.close();
    }

    /// The element `f_e` of `xs` as a view (inside the filter kernels).
    fn filter_elem(&mut self, xs: ExprId) -> Result<Rc<View>> {
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        Ok(xv.access(ArithExpr::var("f_e", Range::upto(n))))
    }

    /// The predicate applied to the element `x`, as an int flag that is 0 past the end (the
    /// predicate is not evaluated there: it may index other arrays with the element).
    fn filter_pred(&mut self, p: ExprId, x: Rc<View>, n: &ArithExpr) -> Result<String> {
        let (params, body) = self.lambda(p)?;
        self.bind(params[0], Bound::View(x));
        let flag = self.fresh("p");
        self.line(&format!("int {flag} = 0;"));
        self.open(&format!("if (f_e < {n}) {{"));
        let c = self.scalar_expr(body)?;
        self.line(&format!("{flag} = {c} ? 1 : 0;"));
        self.close();
        Ok(flag)
    }
}
