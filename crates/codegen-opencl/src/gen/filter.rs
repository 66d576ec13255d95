//! Filters: `filterSeq` inside a work-item (a counter and a guarded store), and the
//! multi-kernel `filterGlb`: a count kernel, then an ordered scatter kernel.
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

use super::*;
use crate::ast::{AssignOp, BinOp, CType, Expr, Fence, Stmt};
use crate::namer::{Ident, Namer};
use arith::{ArithExpr, Range};
use ir::MapKind;
use ir::{AddressSpace, ExprId, Type};
use memalloc::Role;
use std::rc::Rc;

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

/// The filter kernels' locals, by their fixed spellings.
struct Names {
    a: Ident,
    b: Ident,
    base: Ident,
    c: Ident,
    e: Ident,
    ex: Ident,
    g: Ident,
    i: Ident,
    j: Ident,
    l: Ident,
    part: Ident,
    pk: Ident,
    pos: Ident,
    r: Ident,
    roff: Ident,
    run: Ident,
    runpre: Ident,
    runsum: Ident,
    s: Ident,
    scan: Ident,
    t: Ident,
    t0: Ident,
    t1: Ident,
    y: Ident,
    z: Ident,
}

impl Names {
    fn new(n: &mut Namer) -> Names {
        let mut f = |s: &str| n.fixed(&format!("f_{s}"));
        Names {
            a: f("a"),
            b: f("b"),
            base: f("base"),
            c: f("c"),
            e: f("e"),
            ex: f("ex"),
            g: f("g"),
            i: f("i"),
            j: f("j"),
            l: f("l"),
            part: f("part"),
            pk: f("pk"),
            pos: f("pos"),
            r: f("r"),
            roff: f("roff"),
            run: f("run"),
            runpre: f("runpre"),
            runsum: f("runsum"),
            s: f("s"),
            scan: f("scan"),
            t: f("t"),
            t0: f("t0"),
            t1: f("t1"),
            y: f("y"),
            z: f("z"),
        }
    }
}

/// Reserves the filter kernels' fixed spellings, before any other name is handed out.
pub(super) fn reserve(n: &mut Namer) {
    Names::new(n);
}

fn v(i: &Ident) -> Expr {
    Expr::var(i)
}

fn int(k: usize) -> Expr {
    Expr::Int(k as i64)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Add, a, b)
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Mul, a, b)
}

/// `(int)((x >> (8 * f_r)) & 255)`: the 8-bit field of round `f_r` in packed flags.
fn field(x: &Ident, r: &Ident) -> Expr {
    let shifted = Expr::bin(BinOp::Shr, v(x), mul(int(8), v(r)));
    Expr::cast(CType::INT, Expr::bin(BinOp::BitAnd, shifted, int(255)))
}

fn local_array(ty: CType, name: &Ident, len: usize) -> Stmt {
    Stmt::Decl {
        ty,
        name: name.clone(),
        space: Some(AddressSpace::Local),
        len: Some(len),
        init: None,
        is_const: false,
    }
}

fn add_to(lhs: Expr, rhs: Expr) -> Stmt {
    Stmt::Assign {
        lhs,
        op: AssignOp::Add,
        rhs,
    }
}

impl Gen<'_> {
    pub(super) fn gen_filter_seq(&mut self, e: ExprId, p: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let (params, body) = self.lambda(p)?;
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(e, "internal: filter without a length destination"))?;
        let cnt = self.fresh("cnt");
        self.push(Stmt::decl(CType::INT, &cnt, Expr::Int(0)));
        let c = ArithExpr::var(cnt.as_str(), Range::upto(n.clone()));
        self.emit_loop(e, MapKind::Seq, &n, |g, i| {
            let x = xv.access(i);
            g.bind(params[0], Bound::View(x.clone()));
            let cond = g.scalar_expr(body)?;
            g.open_if(cond);
            let v = x.read(&[]).map_err(|m| g.err(xs, m.0))?;
            g.write(&dest.view, std::slice::from_ref(&c), &v, e)?;
            g.push(Stmt::Assign {
                lhs: Expr::var(&cnt),
                op: AssignOp::Add,
                rhs: Expr::Int(1),
            });
            g.close();
            Ok(())
        })?;
        let loc = len.write(&[]).map_err(|m| self.err(e, m.0))?;
        self.store(&loc, &Read::Expr(Access::Value(Expr::var(&cnt))), e)
    }

    /// `filterGlb p xs` into `dest` (see the module documentation).
    pub(super) fn filter_glb(&mut self, e: ExprId, p: ExprId, xs: ExprId, dest: &Dest) -> Result<()> {
        let f = Names::new(&mut self.names);
        let n = self.len_of(xs)?;
        let cap = self.capacity(&n);
        let (wg, rounds) = (FILTER_WG, FILTER_ROUNDS);
        let tile = wg * rounds;
        let tiles = cap
            .add(&ArithExpr::cst(tile as i64 - 1))
            .div(&ArithExpr::cst(tile as i64));
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
        let counts = self.buf_ident(&self.mem.buffers[counts_b].name.clone());
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(e, "internal: filter without a length destination"))?;
        let len_loc = match len.write(&[]).map_err(|m| self.err(e, m.0))? {
            Loc::Plain(l) => self.access_expr(&l),
            Loc::Vector { .. } => return Err(self.err(e, "internal: vector length")),
        };
        // `f_t * tile + f_r * wg + f_l`: the element of this work-item in round `f_r` of tile `f_t`
        let elem_index = || add(add(mul(v(&f.t), int(tile)), mul(v(&f.r), int(wg))), v(&f.l));

        // Kernel 1: count.
        self.filter_kernel(&f, &groups);
        self.filter_tile_range(&f, &per, &tiles);
        self.push(Stmt::decl(CType::INT, &f.c, int(0)));
        self.open_for(&f.t, v(&f.t0), v(&f.t1), int(1), false);
        self.open_for(&f.r, int(0), int(rounds), int(1), true);
        self.push(Stmt::decl(CType::INT, &f.e, elem_index()));
        let x = self.filter_elem(&f, xs)?;
        let cond = self.filter_pred(&f, p, x, &n)?;
        self.push(add_to(v(&f.c), v(&cond)));
        self.close();
        self.close();
        self.reduce_local(&f, &f.c);
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(0)));
        self.push(Stmt::assign(v(&counts).index(v(&f.g)), v(&f.part).index(int(0))));
        self.close();
        let k1 = self.k.take().expect("set");
        self.finish_kernel(k1, e)?;

        // Kernel 2: ordered scatter.
        self.filter_kernel(&f, &groups);
        let slots = wg + wg / SCAN_RUN;
        let runs = wg / SCAN_RUN;
        {
            let k = self.k.as_mut().expect("set");
            // Two of each, alternating between tiles, so the next tile's first writes cannot race
            // with the last reads of this one and a tile needs three barriers, not four.
            k.decls.push(local_array(CType::ULONG, &f.scan, 2 * slots));
            k.decls.push(local_array(CType::ULONG, &f.runsum, 2 * runs));
            k.decls.push(local_array(CType::ULONG, &f.runpre, 2 * runs));
            k.decls.push(local_array(CType::INT, &f.roff, 2 * (rounds + 1)));
        }
        self.filter_tile_range(&f, &per, &tiles);
        self.push(Stmt::decl(CType::INT, &f.c, int(0)));
        self.open(Head::For {
            var: f.i.clone(),
            init: v(&f.l),
            cond: Expr::bin(BinOp::Lt, v(&f.i), v(&f.g)),
            step: (AssignOp::Add, int(wg)),
            unroll: false,
        });
        self.push(add_to(v(&f.c), v(&counts).index(v(&f.i))));
        self.close();
        self.reduce_local(&f, &f.c);
        self.push(Stmt::decl(CType::INT, &f.base, v(&f.part).index(int(0))));
        let last_group = Expr::bin(
            BinOp::Sub,
            Expr::cast(CType::INT, Expr::call("get_num_groups", vec![int(0)])),
            int(1),
        );
        self.open_if(Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Eq, v(&f.l), int(0)),
            Expr::bin(BinOp::Eq, v(&f.g), last_group),
        ));
        self.push(Stmt::assign(len_loc, add(v(&f.base), v(&counts).index(v(&f.g)))));
        self.close();
        let elem_ty = match self.cty(xs)? {
            Type::Array(t, _) => *t,
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => return Err(self.err(xs, format!("internal: filter of {t}"))),
        };
        // The tile's elements stay in registers (one private array per scalar component, indexed
        // only in unrolled loops) between the predicate and the store.
        let x = self.filter_elem(&f, xs)?;
        // Rows (arrays) are too large for registers: the predicate reads the input in place and
        // a kept row is copied from the input again at its place in the output.
        let rows = matches!(elem_ty, Type::Array(..));
        let mut decls = vec![];
        let mut loads = vec![];
        let staged = if rows {
            Read::Tuple(vec![])
        } else {
            let read = x.read(&[]).map_err(|m| self.err(xs, m.0))?;
            self.stage(&f, &read, &elem_ty, &mut decls, &mut loads)?
        };
        self.open_for(&f.t, v(&f.t0), v(&f.t1), int(1), false);
        let parity = Expr::bin(BinOp::BitAnd, Expr::bin(BinOp::Sub, v(&f.t), v(&f.t0)), int(1));
        self.push(Stmt::decl(CType::INT, &f.b, parity));
        for d in decls {
            self.push(d);
        }
        self.push(Stmt::decl(CType::ULONG, &f.pk, int(0)));
        self.open_for(&f.r, int(0), int(rounds), int(1), true);
        self.push(Stmt::decl(CType::INT, &f.e, elem_index()));
        if !loads.is_empty() {
            self.open_if(Expr::bin(BinOp::Lt, v(&f.e), arith(&n)));
            for l in loads {
                self.push(l);
            }
            self.close();
        }
        let elem_view = if rows {
            x.clone()
        } else {
            self.read_view(staged.clone(), &elem_ty)
        };
        let cond = self.filter_pred(&f, p, elem_view, &n)?;
        let flag = Expr::bin(BinOp::Shl, Expr::cast(CType::ULONG, v(&cond)), mul(int(8), v(&f.r)));
        self.push(Stmt::Assign {
            lhs: v(&f.pk),
            op: AssignOp::Or,
            rhs: flag,
        });
        self.close();
        self.scan_tile(&f, slots, runs, rounds);
        self.open_for(&f.r, int(0), int(rounds), int(1), true);
        let kept = Expr::bin(
            BinOp::BitAnd,
            Expr::bin(BinOp::Shr, v(&f.pk), mul(int(8), v(&f.r))),
            int(1),
        );
        self.open_if(kept);
        let roff = |k: Expr| v(&f.roff).index(add(mul(v(&f.b), int(rounds + 1)), k));
        let pos = add(add(v(&f.base), roff(v(&f.r))), field(&f.ex, &f.r));
        self.push(Stmt::decl(CType::INT, &f.pos, pos));
        let pos = ArithExpr::var(f.pos.as_str(), Range::upto(cap.clone()));
        if rows {
            self.push(Stmt::decl(CType::INT, &f.e, elem_index()));
            let (dims, _) = dims_of(&elem_ty);
            self.copy_dims(e, &x, &dest.view.access(pos), &dims, vec![], MapKind::Seq)?;
        } else {
            let loc = dest.view.write(&[pos]).map_err(|m| self.err(e, m.0))?;
            self.store(&loc, &staged, e)?;
        }
        self.close();
        self.close();
        self.push(add_to(v(&f.base), roff(int(rounds))));
        self.close();
        let k2 = self.k.take().expect("set");
        self.finish_kernel(k2, e)
    }

    /// Starts a filter kernel of `groups` work-groups of `FILTER_WG` work-items.
    fn filter_kernel(&mut self, f: &Names, groups: &ArithExpr) {
        let mut k = KernelCx::new(Level::Item);
        k.wrg = true;
        k.global[0] = Some(groups.clone());
        k.local[0] = Some(FILTER_WG);
        k.decls.push(local_array(CType::INT, &f.part, FILTER_WG));
        self.k = Some(k);
        self.push(Stmt::decl(CType::INT, &f.g, Expr::call("get_group_id", vec![int(0)])));
        self.push(Stmt::decl(CType::INT, &f.l, Expr::call("get_local_id", vec![int(0)])));
    }

    /// The tiles `[f_t0, f_t1)` of this work-group: `per` consecutive tiles, fewer in the last group.
    fn filter_tile_range(&mut self, f: &Names, per: &ArithExpr, tiles: &ArithExpr) {
        self.push(Stmt::decl(CType::INT, &f.t0, mul(v(&f.g), arith(per))));
        let end = Expr::call("min", vec![add(v(&f.t0), arith(per)), arith(tiles)]);
        self.push(Stmt::decl(CType::INT, &f.t1, end));
    }

    /// Private arrays holding one element per round: their declarations, the statements loading
    /// element `f_e` into slot `f_r`, and the element as read from slot `f_r`.
    fn stage(&mut self, f: &Names, r: &Read, ty: &Type, decls: &mut Vec<Stmt>, loads: &mut Vec<Stmt>) -> Result<Read> {
        match (r, ty) {
            (Read::Tuple(rs), Type::Tuple(ts)) if rs.len() == ts.len() => Ok(Read::Tuple(
                rs.iter()
                    .zip(ts)
                    .map(|(r, t)| self.stage(f, r, t, decls, loads))
                    .collect::<Result<_>>()?,
            )),
            (Read::Expr(x), t) => {
                let name = self.fresh("x");
                let ty = self.ctype(t)?;
                decls.push(Stmt::Decl {
                    ty,
                    name: name.clone(),
                    space: None,
                    len: Some(FILTER_ROUNDS),
                    init: None,
                    is_const: false,
                });
                let slot = v(&name).index(v(&f.r));
                loads.push(Stmt::assign(slot.clone(), self.access_expr(x)));
                Ok(Read::Expr(Access::Value(slot)))
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
    fn scan_tile(&mut self, f: &Names, slots: usize, runs: usize, rounds: usize) {
        let run = SCAN_RUN;
        let pad = run + 1;
        // slot of work-item `f_l` in this tile's half of `f_scan`, one pad slot per run
        let my_slot = || {
            let base = add(mul(v(&f.b), int(slots)), v(&f.l));
            v(&f.scan).index(add(base, Expr::bin(BinOp::Div, v(&f.l), int(run))))
        };
        let in_half = |arr: &Ident, k: Expr| v(arr).index(add(mul(v(&f.b), int(runs)), k));
        self.push(Stmt::assign(my_slot(), v(&f.pk)));
        self.push(Stmt::Barrier(Fence::Local));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), int(runs)));
        self.push(Stmt::decl(CType::ULONG, &f.a, int(0)));
        self.open_for(&f.j, int(0), int(run), int(1), true);
        let s = add(add(mul(v(&f.b), int(slots)), mul(v(&f.l), int(pad))), v(&f.j));
        self.push(Stmt::decl(CType::INT, &f.s, s));
        self.push(Stmt::decl(CType::ULONG, &f.y, v(&f.scan).index(v(&f.s))));
        self.push(Stmt::assign(v(&f.scan).index(v(&f.s)), v(&f.a)));
        self.push(add_to(v(&f.a), v(&f.y)));
        self.close();
        self.push(Stmt::assign(in_half(&f.runsum, v(&f.l)), v(&f.a)));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), int(runs)));
        self.push(Stmt::decl(CType::ULONG, &f.a, int(0)));
        self.open_for(&f.j, int(0), int(runs), int(1), true);
        let before = Expr::select(
            Expr::bin(BinOp::Lt, v(&f.j), v(&f.l)),
            in_half(&f.runsum, v(&f.j)),
            int(0),
        );
        self.push(add_to(v(&f.a), before));
        self.close();
        self.push(Stmt::assign(in_half(&f.runpre, v(&f.l)), v(&f.a)));
        // The totals are added unpacked: a round's total can be 256, one more than a field holds.
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(runs - 1)));
        self.push(Stmt::decl(CType::ULONG, &f.z, in_half(&f.runsum, v(&f.l))));
        self.push(Stmt::decl(CType::INT, &f.run, int(0)));
        self.open_for(&f.r, int(0), int(rounds), int(1), false);
        let roff = |k: Expr| v(&f.roff).index(add(mul(v(&f.b), int(rounds + 1)), k));
        self.push(Stmt::assign(roff(v(&f.r)), v(&f.run)));
        self.push(add_to(v(&f.run), add(field(&f.a, &f.r), field(&f.z, &f.r))));
        self.close();
        self.push(Stmt::assign(roff(int(rounds)), v(&f.run)));
        self.close();
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        let run_of = Expr::bin(BinOp::Div, v(&f.l), int(run));
        self.push(Stmt::decl(
            CType::ULONG,
            &f.ex,
            add(in_half(&f.runpre, run_of), my_slot()),
        ));
    }

    /// Sum of `val` over the work-group, left in `f_part[0]` for every work-item.
    fn reduce_local(&mut self, f: &Names, val: &Ident) {
        self.push(Stmt::assign(v(&f.part).index(v(&f.l)), v(val)));
        self.push(Stmt::Barrier(Fence::Local));
        self.open(Head::For {
            var: f.s.clone(),
            init: int(FILTER_WG / 2),
            cond: Expr::bin(BinOp::Gt, v(&f.s), int(0)),
            step: (AssignOp::Shr, int(1)),
            unroll: false,
        });
        self.open_if(Expr::bin(BinOp::Lt, v(&f.l), v(&f.s)));
        self.push(add_to(
            v(&f.part).index(v(&f.l)),
            v(&f.part).index(add(v(&f.l), v(&f.s))),
        ));
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        self.close();
    }

    /// The element `f_e` of `xs` as a view (inside the filter kernels).
    fn filter_elem(&mut self, f: &Names, xs: ExprId) -> Result<Rc<View>> {
        let n = self.len_of(xs)?;
        let xv = self.value(xs)?;
        Ok(xv.access(ArithExpr::var(f.e.as_str(), Range::upto(n))))
    }

    /// The predicate applied to the element `x`, as an int flag that is 0 past the end (the
    /// predicate is not evaluated there: it may index other arrays with the element).
    fn filter_pred(&mut self, f: &Names, p: ExprId, x: Rc<View>, n: &ArithExpr) -> Result<Ident> {
        let (params, body) = self.lambda(p)?;
        self.bind(params[0], Bound::View(x));
        let flag = self.fresh("p");
        self.push(Stmt::decl(CType::INT, &flag, int(0)));
        self.open_if(Expr::bin(BinOp::Lt, v(&f.e), arith(n)));
        let c = self.scalar_expr(body)?;
        self.push(Stmt::assign(v(&flag), Expr::select(c, int(1), int(0))));
        self.close();
        Ok(flag)
    }
}
