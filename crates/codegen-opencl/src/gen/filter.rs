//! Filters: `filterSeq` inside a work-item (a counter and a guarded store), and `filterGlb` in
//! one kernel that reads each input element once (a single-pass scan with decoupled look-back).
//!
//! The grid is persistent: at most `FILTER_GROUPS` work-groups, each looping while tickets are
//! left. A group takes a ticket (`atomic_inc` on word 0 of a zeroed status buffer) and handles
//! tile number `ticket`: it evaluates the predicate on the tile's elements, scans their flags in
//! local memory (every part through one set of three barriers), publishes the tile's aggregate,
//! then looks back over the tiles before it in windows of `LOOKBACK` tiles, one work-item reading
//! both status words of each tile at once; the window is reduced in parallel through two local
//! words (`atomic_min` finds the nearest tile that is not an aggregate, `atomic_add` sums the
//! tiles up to it) until it meets a published inclusive prefix (a window of aggregates slides by
//! its width; an unpublished tile is read again, the window's top moved to it). The group then
//! publishes its own inclusive prefix, takes its next ticket and stores its kept elements at
//! their places. The last tile writes the length, which stays on the device. On a GPU the next
//! tile's elements are loaded into a second set of registers before this tile's stores, so loads
//! stay in flight across the stores and the ticket; the host defines `LIFT_GPU` (0 elsewhere),
//! and the compiler folds the other path away.
//!
//! Where the elements are 4-byte scalars stored (or mapped to scalars) into a plain buffer and
//! the device's local memory holds a tile of them beside the scan's arrays, the GPU's shape
//! gathers instead: right after the scan the group publishes its aggregate, its last work-item
//! takes the next ticket while every work-item puts its kept elements at their ranks in the
//! tile in local memory (`f_cb`, 32 KiB), which frees their registers; after one barrier the
//! group issues the next tile's loads into them and only then looks back, so the loads are in
//! flight through the look-back and the stores, and the stores are one run: consecutive
//! work-items write consecutive places from the tile's offset, the fused map applied as each
//! element is stored (`gathered_store`). The ticket taken before the look-back delays its tile
//! by the look-back, as the loads it replaces did. That barrier region holds global atomics
//! (aggregate, ticket) beside local stores, the pattern of the PoCL fault below; it is correct
//! on PoCL, under Oclgrind and on the H200 at every size the filter tests run.
//!
//! Measured 2026-11-24 (`bench/results/runs/nvidia-h200-2026-11-24-filt-speed5-0f32096.md`, H200, 10^8
//! elements, a copy 0.194 ms): the filter alone took 0.227 ms before (64 registers); gathered
//! with the ticket after the gathering's barrier 0.210 (80 registers: three groups resident),
//! with the ticket taken during the gathering 0.188 (64 registers), this kernel. Gathered but
//! stored as `float4` runs 0.249 (128 registers), gathered after the look-back without early
//! loads 0.260, the ticket alone taken during the look-back 0.304, a window of 64 0.203 /
//! 0.187 (without / with the early ticket: not kept, it would change the CPU's shape too),
//! 4096-element tiles 0.209 (48 registers; PoCL miscomputes them, see `FILTER_WG_MIN`). With
//! the early loads the look-back makes 3.1 trips a tile on average (1.25 of them ending on a
//! tile not yet published; 80 registers) against 4.4 (2.4) before. Program 6.1 with the map applied as elements are
//! gathered took 0.211 ms (80 registers; 0.234 before); this kernel applies it at the store,
//! so that 6.1's kernel is the filter's but for the map, and was not timed at 10^8.

//! Forward progress: OpenCL 1.2 promises none between the work-groups of a launch, which is why
//! the tile comes from the ticket and not from `get_group_id`: a group only waits for tiles whose
//! tickets were taken earlier, by groups that are therefore already running. Every device we run
//! on keeps a started work-group running until it ends (GPU: resident groups are never evicted for
//! unstarted ones; PoCL's CPU driver runs each work-group to its end on one thread; Oclgrind runs
//! groups one after another), so waiting on started groups cannot deadlock there. The status words
//! are written with atomics and read with atomics except on a GPU (`STATUS_LOAD`), so Oclgrind
//! sees no race, and nothing else is shared
//! between groups: each group's output places depend only on the counts.
//!
//! A `mapGlb` consuming the filter's result at host level (`unpack ys (filterGlb p xs) (mapGlb f
//! ys)`, the thesis's program 6.1) is fused: `f` is applied to each kept element as it is
//! stored, so the whole program is one launch (`gen/host.rs` recognizes the form).
//!
//! Measured (`lift bench`, NVIDIA H200, median device times, one command; a copy of the input
//! took 0.195 ms): at 10^8 elements the filter alone / program 6.1 took 0.379 / 0.390 ms before
//! this design (one tile a group, the window reduced serially by work-item 0, two scans of three
//! barriers each), 0.313 / 0.313 ms with the parallel window and one scan, 0.294 / 0.297 ms with
//! persistent groups, and 0.274 / 0.272 ms with the GPU's prefetch (this kernel). Taking the next
//! ticket before the scan, to prefetch earlier, made it slower (0.412 / 0.429 ms, and 0.427 /
//! 0.408 ms with 6144-element tiles): a tile ticketed early publishes nothing until its group has
//! finished the tile before it, and every later tile's look-back waits on it. All variants
//! equalled the interpreter at 300001 elements there. On PoCL the prefetch made the kernel
//! several times slower (its second register set lives in per-work-item context arrays across the
//! barriers), hence `LIFT_GPU`; the loop itself still costs PoCL about a quarter over the one-tile
//! kernel at 10^7 elements (interleaved runs on a loaded machine, 124–153 ms before, 156–188 ms
//! now), not yet recovered (a kernel without the loop for CPUs needs a grid chosen by device).
//! The GPU's shape of chunks of 4 (one `float4` load each, 8192-element tiles, below) took
//! 0.266 / 0.265 ms (0.274 / 0.274 before it in the same command), 0.035 / 0.036 ms at 10^7
//! (0.037) but 0.0095 ms at 10^4 (0.0080: fewer, larger tiles). In that command the old
//! one-element rounds without prefetch (`LIFT_GPU_PATHS=0`) also took 0.264 ms for the filter
//! alone, chunks of 4 in 4096-element tiles 0.257 / 0.270 ms, and the kernel without its stores
//! 0.236 ms: neither the loads' width nor the stores is what keeps it at 1.35× a copy (0.195 ms).
//! (Without the look-back every tile stores at offset 0 and the contended stores took 0.48 ms,
//! which measures nothing.) The notes: `bench/results/runs/nvidia-h200-2026-11-24-filter.md`.
//! The older history: a look-back of one predecessor at a time took 0.617 ms for 6.1 at 10^8, the
//! two-kernel reduce-then-scan before it 0.380 ms in three launches.
//!
//! Earlier the same day (`bench/results/runs/nvidia-h200-2026-11-24-filt-speed3-5ef3757.md`, filter alone at
//! 10^8, variants of the generator in two commands): this kernel took 0.261 ms at 98 registers
//! a work-item (two groups of 256 resident on a compute unit), and 0.246 ms with its status
//! words read by volatile loads instead of `atomic_or` (this kernel now). One group a tile
//! (a grid of one group for each tile, no loop, no prefetch) took 0.244 ms at 62 registers
//! (four resident), 0.246 ms with the volatile loads, but 0.0398 ms at 10^7 against this
//! kernel's 0.0353: it was not kept. Its tiles of 4096 took 0.300 ms, of 2048 0.339 ms, groups
//! of 128 0.324 ms: each tile pays a look-back. Without the look-back (each tile stored at a
//! distinct place) one group a tile took 0.201 ms, without its stores 0.186 ms (less than a
//! copy, 0.195), compacting the kept elements in local memory before storing 0.243 ms, the
//! ticket replaced by `get_group_id` (tiles of 4096) 0.290 against 0.300 ms: the look-back's
//! latency and the stores are what remain.
//!
//! Then (`bench/results/runs/nvidia-h200-2026-11-24-filt-speed4-2653d3a.md`, filter alone at
//! 10^8, this kernel 0.252–0.254 ms at 91 registers): the persistent loop without the prefetch
//! took 0.230 ms at 64 registers (four groups resident instead of two) but was slower at 10^7
//! and 10^4, so a kernel built for a size of at least 2^25 elements drops it ([`GPU_LARGE`]).
//! Slower were: a wider look-back window (each of 32 lanes reading 4 or 8 tiles: 0.305 / 0.456
//! ms), 16 lanes (0.269), one status word a tile (0.259), work-item 0 looking back alone
//! without barriers, 8 or 16 tiles a read (0.299 / 0.325), and taking the next ticket in the
//! scan to prefetch before the look-back (0.424): the look-back's cost is its polling traffic
//! and the delay of tiles ticketed early, not its window. Publishing the aggregate before the
//! scan's last barrier gained 2 % (measured with the 4-tile lanes only), but PoCL 3.1 then
//! miscomputes the kernel (every count 0: one work-item's global atomic between barriers in
//! the ticket loop hides that region's local stores after the barrier; a reduced kernel is
//! `bench/results/runs/pocl-filter-fault-repro.cl`, correct under Oclgrind and with `-cl-opt-disable`), so
//! nothing global is written before the scan's last barrier.
//!
//! The kernel has two shapes, one for GPUs and one for other devices ([`Shape`]); both are in
//! its text, under `if (LIFT_GPU)` and `if (!LIFT_GPU)`, and the host's definition of the macro
//! when it builds the program for a device picks one (`LIFT_GPU_PATHS=1` forces the GPU's, so
//! that the tests run it on PoCL and Oclgrind too). In round `k` of a tile, work-item `l` holds
//! the `chunk` consecutive elements from `chunk * (k * FILTER_WG + l)`: on a GPU a chunk is 4
//! elements, one 16-byte vector load where the input is a buffer of scalars, so a work-item has
//! eight such loads in flight a tile (8192 elements) and the next tile's eight more; on a CPU a
//! chunk is one element, so that neighbouring work-items read neighbouring elements, which PoCL
//! turns into vector loads across work-items (its tiles are 4096 elements). Each round's count
//! of kept elements is a field of a part's packed counts (`ulong`, 16 bits a round on a GPU, 8
//! on a CPU), and each element's flag a bit of the part's mask, both in registers; one
//! work-group scan of the packed counts orders a whole part (an exclusive prefix over at most
//! 255 work-items, at most `255 * chunk`, never carries into the next field). The kept
//! elements of one round go to one contiguous run of the output, a work-item's in order from
//! its prefix, so stores coalesce.

use super::*;
use crate::ast::{AssignOp, BinOp, CType, Expr, Fence, Stmt};
use crate::namer::{Ident, Namer};
use arith::{ArithExpr, Range};
use ir::MapKind;
use ir::{AddressSpace, Expr as IrExpr, ExprId, FilterKind, Prim, Type, VarId};
use memalloc::Role;
use std::collections::BTreeSet;
use std::rc::Rc;
use typeck::CheckKind;
mod lookback;
mod tile;

/// Work-items per work-group of the filter kernel (a multiple of `SCAN_RUN`; at most 256 so
/// that no exclusive prefix of a round overflows its field, see [`Shape`]), or fewer where the
/// device allows fewer ([`filter_wg`]).
const FILTER_WG: usize = 256;
/// The fewest work-items per work-group of the filter kernel. Groups of 4 to 32 are correct
/// under Oclgrind, but PoCL 3.1 (LLVM 15) computes every tile's count as 0 with them (the
/// tile's flags never reach the scan); a device allowing fewer refuses the launch cleanly.
/// Checked on 2026-11-24: groups of 32 are also correct on PoCL with `-cl-opt-disable`, and so
/// is the GPU's shape with one part a tile (4096 elements), which PoCL miscomputes optimized
/// too: the signature of the reduced fault (`bench/results/runs/
/// pocl-filter-fault-repro.cl`: local stores of a barrier region
/// lost after the barrier, in a loop of barriers whose bound comes from local memory, right
/// with `-cl-opt-disable` and under Oclgrind). Neither of these kernels has that repro's
/// global atomic inside the scan, so the trigger differs; that they are one LLVM fault is
/// likely, not proven.
const FILTER_WG_MIN: usize = 64;
/// Scans per tile: each orders the rounds of every work-item packed in one `ulong`, and one
/// look-back serves them all.
const FILTER_PARTS: usize = 2;

/// The shape of a tile. Work-item `l` holds, in round `k`, the `chunk` consecutive elements
/// from `chunk * (k * FILTER_WG + l)` of the tile; a round's count of kept elements is one
/// `field`-bit field of the part's packed counts (so `64 / field` rounds a part), and an
/// exclusive prefix over at most 255 work-items, at most `255 * chunk`, must fit it.
#[derive(Clone, Copy)]
struct Shape {
    chunk: usize,
    field: usize,
    /// Loads of the next tile are issued before this tile's stores.
    prefetch: bool,
    /// Scans a tile (at most `FILTER_PARTS`).
    parts: usize,
}

impl Shape {
    fn rounds(self) -> usize {
        64 / self.field
    }

    /// Elements of a tile read by groups of `wg` work-items.
    fn tile(self, wg: usize) -> usize {
        wg * self.chunk * self.rounds() * self.parts
    }

    fn tiles(self, wg: usize, cap: &ArithExpr) -> ArithExpr {
        let t = self.tile(wg) as i64;
        cap.add(&ArithExpr::cst(t - 1)).div(&ArithExpr::cst(t))
    }
}

/// On a GPU: 16 bytes in flight per load and eight loads a work-item a tile, 8,192 elements,
/// prefetched (NVIDIA H200 measurements in the module doc).
const GPU_SHAPE: Shape = Shape {
    chunk: 4,
    field: 16,
    prefetch: true,
    parts: FILTER_PARTS,
};
/// On a GPU where the filter's capacity is known when the kernel is built (as `lift run`,
/// `bench` and `tune` build them) and at least `LARGE`: the same tiles without the prefetch. A
/// work-item then holds one tile's elements in registers instead of two (64 registers on the
/// H200 against 91), so four groups of 256 work-items are resident on a compute unit instead
/// of two, and one group's look-back overlaps the others' loads. Measured (2026-11-24, filter
/// alone, `bench/results/runs/nvidia-h200-2026-11-24-filt-speed4-2653d3a.md`): 0.230 ms at 10^8 elements against 0.254 with the prefetch, but 0.0414 ms at 10^7
/// against 0.0361 and 0.0097 at 10^4 against 0.0085, where fewer tiles a group leave the
/// prefetch's overlap the larger gain.
const GPU_LARGE: Shape = Shape {
    prefetch: false,
    ..GPU_SHAPE
};
/// The capacity from which a GPU filter built for its size takes `GPU_LARGE`: between the two
/// sizes measured (10^7 prefetched faster, 10^8 slower); 2^25 itself is not measured.
const LARGE: i64 = 1 << 25;
/// Elsewhere (PoCL's CPU driver): one element a round, so that neighbouring work-items read
/// neighbouring elements, which PoCL turns into vector loads across work-items; 4,096 elements.
/// Its tiles are the smaller ones, which the status words and the grid are sized for.
const CPU_SHAPE: Shape = Shape {
    chunk: 1,
    field: 8,
    prefetch: false,
    parts: FILTER_PARTS,
};
const _: () = assert!(CPU_SHAPE.chunk * (64 / CPU_SHAPE.field) <= GPU_SHAPE.chunk * (64 / GPU_SHAPE.field));
const _: () = assert!(255 * GPU_SHAPE.chunk < 1 << GPU_SHAPE.field && 255 * CPU_SHAPE.chunk < 1 << CPU_SHAPE.field);
/// Work-items whose packed flags one of the first `FILTER_WG / SCAN_RUN` work-items scans serially.
const SCAN_RUN: usize = 8;
/// Tiles whose status the look-back reads at once, one work-item each (at most `FILTER_WG`).
pub(super) const LOOKBACK: usize = 32;
/// Work-groups launched at most: each loops over tiles while tickets are left, so this need
/// only be at least as many as a device runs at once (an H200 holds at most 132 * 8 groups of
/// 256 work-items).
const FILTER_GROUPS: usize = 1024;
/// The macro that the host defines to 1 when it builds a program for a GPU and to 0 otherwise
/// (`host_runner::Session`); the program's text defaults it to 0 for other compilers.
const GPU_MACRO: &str = "LIFT_GPU";
/// The macro that the host defines to 1 when the device is a GPU, whatever `LIFT_GPU_PATHS`
/// forces (`host_runner::Session`).
const DEVICE_MACRO: &str = "LIFT_GPU_DEVICE";
/// How the look-back reads a status word: on a GPU a volatile load, which reads the L2 cache
/// where the atomics that publish the words are performed (`atomic_or` there made the filter
/// 6 % slower on the H200, many groups reading the same words with read-modify-writes);
/// elsewhere an atomic, so that Oclgrind sees no race between work-groups.
pub(super) const STATUS_LOAD: &str = "LIFT_STATUS_LOAD";

/// The filter kernel's work-group size where a group holds at most `limit`: the largest power of
/// two within it, between `FILTER_WG_MIN` and `FILTER_WG` (a power of two of at least
/// `LOOKBACK` work-items divides into scan runs and holds a look-back window).
pub(super) fn filter_wg(limit: &WorkGroupLimit) -> usize {
    let room = limit.room(0, 1).clamp(FILTER_WG_MIN, FILTER_WG);
    1 << room.ilog2()
}

/// Defines, once at the top of the program, the macros of the kernels that order their
/// work-groups through a status buffer (this filter and `scan.rs`): `LIFT_GPU`,
/// `LIFT_GPU_DEVICE` (both 0 unless the host defines them) and `LIFT_STATUS_LOAD`; the length
/// of that block, which the program's text starts with.
pub(super) fn device_macros(g: &mut Gen) -> usize {
    let default = format!(
        "#ifndef {GPU_MACRO}\n#define {GPU_MACRO} 0\n#endif\n#ifndef {DEVICE_MACRO}\n#define {DEVICE_MACRO} 0\n#endif\n#if {DEVICE_MACRO}\n#define {STATUS_LOAD}(p) (*(volatile global int*)(p))\n#else\n#define {STATUS_LOAD}(p) atomic_or((p), 0)\n#endif\n"
    );
    if !g.source.starts_with(&default) {
        g.source.insert_str(0, &default);
    }
    default.len()
}

/// The filter kernel's locals, by their fixed spellings.
struct Names {
    a: Ident,
    b: Ident,
    c: Ident,
    cb: Ident,
    e: Ident,
    g: Ident,
    h: Ident,
    i: Ident,
    ho: Ident,
    ex: Ident,
    j: Ident,
    k: Ident,
    l: Ident,
    lb: Ident,
    m: Ident,
    mk: Ident,
    o: Ident,
    pk: Ident,
    q: Ident,
    r: Ident,
    roff: Ident,
    run: Ident,
    runpre: Ident,
    runsum: Ident,
    s: Ident,
    scan: Ident,
    t: Ident,
    tk: Ident,
    tn: Ident,
    u: Ident,
    w: Ident,
    y: Ident,
    z: Ident,
}

impl Names {
    fn new(n: &mut Namer) -> Names {
        let mut f = |s: &str| n.fixed(&format!("f_{s}"));
        Names {
            a: f("a"),
            b: f("b"),
            c: f("c"),
            cb: f("cb"),
            e: f("e"),
            g: f("g"),
            h: f("h"),
            i: f("i"),
            ho: f("ho"),
            ex: f("ex"),
            j: f("j"),
            k: f("k"),
            l: f("l"),
            lb: f("lb"),
            m: f("m"),
            mk: f("mk"),
            o: f("o"),
            pk: f("pk"),
            q: f("q"),
            r: f("r"),
            roff: f("roff"),
            run: f("run"),
            runpre: f("runpre"),
            runsum: f("runsum"),
            s: f("s"),
            scan: f("scan"),
            t: f("t"),
            tk: f("tk"),
            tn: f("tn"),
            u: f("u"),
            w: f("w"),
            y: f("y"),
            z: f("z"),
        }
    }
}

/// Reserves the filter kernel's fixed spellings, before any other name is handed out.
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

/// `(int)((x >> (bits * f_r)) & (2^bits - 1))`: the count of round `f_r` in packed counts.
fn field(x: Expr, r: &Ident, bits: usize) -> Expr {
    let shifted = Expr::bin(BinOp::Shr, x, mul(int(bits), v(r)));
    Expr::cast(CType::INT, Expr::bin(BinOp::BitAnd, shifted, int((1 << bits) - 1)))
}

/// What both shapes of the filter kernel generate from.
#[derive(Clone)]
struct FilterCx<'a> {
    e: ExprId,
    p: ExprId,
    xs: ExprId,
    consumer: Option<ExprId>,
    producer: Option<(ExprId, ExprId, ExprId)>,
    dest: &'a Dest,
    st: &'a Ident,
    n: &'a ArithExpr,
    cap: &'a ArithExpr,
    /// Work-items per group (`filter_wg` of the device's limit).
    wg: usize,
    elem_ty: &'a Type,
    rows: bool,
    len_loc: &'a Expr,
    /// The scalar type of the stored values where the GPU's shape compacts each tile's kept
    /// values in local memory (`f_cb`) and stores them with consecutive work-items.
    compact: Option<(CType, String)>,
}

/// One scalar component of the filter's input, staged in registers.
struct Leaf {
    /// The private array of its slots.
    array: Ident,
    /// Its value at element `f_e`.
    read: Expr,
    /// The buffer and scalar type when the value is the buffer's element `f_e` itself.
    vector: Option<(Expr, crate::ast::Scalar)>,
}

pub(super) fn local_array(ty: CType, name: &Ident, len: usize) -> Stmt {
    Stmt::Decl {
        ty,
        name: name.clone(),
        space: Some(AddressSpace::Local),
        len: Some(len),
        init: None,
        is_const: false,
    }
}

/// Whether an element of type `t` holds an array (is one, or is a tuple with one at some depth):
/// such elements are copied from the input in place, never staged in registers.
fn holds_arrays(t: &Type) -> bool {
    match t {
        Type::Array(..) | Type::Exists(_) => true,
        Type::Tuple(cs) => cs.iter().any(holds_arrays),
        Type::Scalar(_) | Type::Vector(..) | Type::Fun(..) => false,
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
        let elem_ty = match self.cty(xs)? {
            Type::Array(t, _) => *t,
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => return Err(self.err(xs, format!("internal: filter of {t}"))),
        };
        self.emit_loop(e, MapKind::Seq, &n, |g, i| {
            let x = xv.access(i);
            g.bind(params[0], Bound::View(x.clone()));
            let cond = g.scalar_expr(body)?;
            g.open_if(cond);
            if holds_arrays(&elem_ty) {
                g.store_kept(e, &x, &dest.view.access(c.clone()), &elem_ty)?;
            } else {
                let v = x.read(&[]).map_err(|m| g.err(xs, m.0))?;
                g.write(&dest.view, std::slice::from_ref(&c), &v, e)?;
            }
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

    /// Copies a kept element `x` that holds arrays (a row, or a tuple with arrays, stored as
    /// one buffer per component) from its place in the input to `dst`, its place in the
    /// result, element by element inside the work-item.
    pub(super) fn store_kept(&mut self, e: ExprId, x: &Rc<View>, dst: &Rc<View>, elem_ty: &Type) -> Result<()> {
        if soa_components(elem_ty).is_some() {
            return self.copy_parts(e, x, dst, elem_ty);
        }
        self.copy_dims(e, x, dst, &dims_of(elem_ty).0, vec![], MapKind::Seq)
    }

    /// `unpack ys (filterGlb p xs) (mapGlb f ys)` at host level, with `ys` used only there
    /// and `f` computing a non-array value without parallel maps: the filter node, `p`, `xs`
    /// and `f`, so that one kernel filters and maps (`f` applied to each kept element as it is
    /// stored). The map keeps the filter's length, so the filter writes the result's length.
    pub(super) fn filter_map_fusion(
        &self,
        letnode: ExprId,
        var: VarId,
        value: ExprId,
        body: ExprId,
        dest: &Dest,
    ) -> Option<(ExprId, ExprId, ExprId, ExprId)> {
        if dest.len.is_none() || dest.rows || !self.info.unpacks.contains_key(&Binder::Let(letnode)) {
            return None;
        }
        let filter = self.strip_to(value);
        let IrExpr::Prim {
            prim: Prim::Filter(FilterKind::Glb | FilterKind::Plain),
            args: fargs,
        } = self.prog.expr(filter)
        else {
            return None;
        };
        let map = self.strip_to(body);
        let IrExpr::Prim {
            prim: Prim::Map(MapKind::Glb(0) | MapKind::Plain),
            args,
        } = self.prog.expr(map)
        else {
            return None;
        };
        if !matches!(self.prog.expr(args[1]), IrExpr::Var(v) if *v == var) || self.uses_var(args[0], var) {
            return None;
        }
        let (_, fbody) = self.lambda(args[0]).ok()?;
        // Rows of a filter are copied, not staged in registers: they are not fused.
        let scalar_elems = matches!(self.info.ty(fargs[1]), Type::Array(t, _) if !holds_arrays(t));
        if !scalar_elems || self.contains_parallel(fbody) {
            return None;
        }
        if matches!(self.info.ty(fbody), Type::Array(..) | Type::Exists(_) | Type::Fun(..)) {
            return None;
        }
        Some((filter, fargs[0], fargs[1], args[0]))
    }

    /// `map g ys` (any map kind, `toX` around it) as the filter's input `xs`, with `g` computing a
    /// scalar without parallel maps: the map node, `g` and `ys`, so that the filter reads
    /// `g(ys[i])` instead of a materialized `xs`.
    pub(super) fn filter_producer(&self, xs: ExprId) -> Option<(ExprId, ExprId, ExprId)> {
        let map = self.strip_to(xs);
        let IrExpr::Prim {
            prim: Prim::Map(_),
            args,
        } = self.prog.expr(map)
        else {
            return None;
        };
        if self.layout_map(map).is_some() {
            return None;
        }
        let (_, body) = self.lambda(args[0]).ok()?;
        if !matches!(self.info.ty(body), Type::Scalar(_)) || self.contains_parallel(body) {
            return None;
        }
        Some((map, args[0], args[1]))
    }

    /// `e` without the `toX` and `pack` around it.
    pub(super) fn strip_to(&self, e: ExprId) -> ExprId {
        match self.prog.expr(e) {
            IrExpr::Prim {
                prim: Prim::To(_),
                args,
            } => self.strip_to(args[0]),
            IrExpr::Pack(inner) => self.strip_to(*inner),
            IrExpr::Var(_)
            | IrExpr::Lit(_)
            | IrExpr::Lambda { .. }
            | IrExpr::Prim { .. }
            | IrExpr::Op { .. }
            | IrExpr::If { .. }
            | IrExpr::Let { .. } => e,
        }
    }

    fn uses_var(&self, e: ExprId, var: VarId) -> bool {
        matches!(self.prog.expr(e), IrExpr::Var(v) if *v == var)
            || self.prog.children(e).into_iter().any(|c| self.uses_var(c, var))
    }

    /// `filterGlb p xs` into `dest` (see the module documentation); with `consumer`, the
    /// function of the `mapGlb` that consumed the result, applied to each kept element as it is
    /// stored.
    pub(super) fn filter_glb(
        &mut self,
        e: ExprId,
        p: ExprId,
        xs: ExprId,
        consumer: Option<ExprId>,
        dest: &Dest,
    ) -> Result<()> {
        // A map producing the filter's input is fused into the read; any other computed input
        // is computed by the kernels before.
        let producer = self.filter_producer(xs);
        match producer {
            Some((map, _, _)) => self.host_prepare(map)?,
            None => self.host_prepare(e)?,
        }
        let f = Names::new(&mut self.names);
        let n = self.len_of(xs)?;
        let cap = self.capacity(&n);
        let wg = filter_wg(&self.wg_limit);
        // The status words and the grid serve the shape with the smaller tiles, which has more.
        let tiles = CPU_SHAPE.tiles(wg, &cap);
        // Word 0 is the ticket counter; then each tile's aggregate, then each tile's inclusive
        // prefix, each stored as value + 1 so that the zeroed buffer reads "not published yet".
        let (status_b, _) = self
            .alloc(
                "status",
                &Type::array(Type::int(), tiles.add(&tiles).add(&ArithExpr::cst(1))),
                AddressSpace::Global,
                &[],
                Role::Scratch,
            )
            .map_err(|m| self.err(e, m))?;
        let st = self.buf_ident(&self.mem.buffers[status_b].name.clone());
        let len = dest
            .len
            .clone()
            .ok_or_else(|| self.err(e, "internal: filter without a length destination"))?;
        let len_loc = match len.write(&[]).map_err(|m| self.err(e, m.0))? {
            Loc::Plain(l) => self.access_expr(&l),
            Loc::Vector { .. } | Loc::Lanes(_) => return Err(self.err(e, "internal: vector length")),
        };
        let elem_ty = match self.cty(xs)? {
            Type::Array(t, _) => *t,
            t @ Type::Scalar(_)
            | t @ Type::Vector(..)
            | t @ Type::Tuple(_)
            | t @ Type::Exists(_)
            | t @ Type::Fun(..) => return Err(self.err(xs, format!("internal: filter of {t}"))),
        };
        // Rows (arrays, or tuples holding them) are too large for registers: the predicate
        // reads the input in place and a kept row is copied from the input again at its place
        // in the output (component by component for tuples).
        let rows = holds_arrays(&elem_ty);
        if rows && consumer.is_some() {
            return Err(self.err(e, "internal: fused consumer of a filter of rows"));
        }

        let mut k = KernelCx::new(Level::Item);
        k.wrg = true;
        // A persistent grid: each group loops over tickets until none is left, so launching
        // more groups than the device holds at once only adds groups that find no ticket.
        k.global[0] = Some(ArithExpr::min(&tiles, &ArithExpr::cst(FILTER_GROUPS as i64)));
        k.local[0] = Some(wg);
        let slots = wg + wg / SCAN_RUN;
        let runs = wg / SCAN_RUN;
        k.decls.push(local_array(CType::ULONG, &f.scan, FILTER_PARTS * slots));
        k.decls.push(local_array(CType::ULONG, &f.runsum, FILTER_PARTS * runs));
        k.decls.push(local_array(CType::ULONG, &f.runpre, FILTER_PARTS * runs));
        let roff_len = [GPU_SHAPE, CPU_SHAPE]
            .iter()
            .map(|sh| FILTER_PARTS * (sh.rounds() + 1))
            .max()
            .expect("two shapes");
        k.decls.push(local_array(CType::INT, &f.roff, roff_len));
        k.decls.push(local_array(CType::INT, &f.tk, 2));
        k.decls.push(local_array(CType::INT, &f.lb, 4));
        let compact = self.compact_type(&f, consumer, &elem_ty, rows, dest, &cap)?;
        // The GPU's shape by the size, where the kernel is built for one (see `GPU_LARGE`); a
        // shape gathering its kept values issues the next tile's loads before the look-back,
        // so it holds one tile in registers at every size.
        let large = super::types::specialised(&cap).as_cst().is_some_and(|c| c >= LARGE);
        let shape_for = |gathering: bool| if large || gathering { GPU_LARGE } else { GPU_SHAPE };
        // The compacted values share local memory with the scan's arrays.
        let scan_bytes = 8 * FILTER_PARTS * (slots + 2 * runs) + 4 * (roff_len + 2 + 4);
        let compact_ty = compact;
        let compact_bytes = scan_bytes + 4 * shape_for(true).tile(wg);
        let compact = compact_ty.clone().filter(|_| compact_bytes <= self.wg_limit.local_mem);
        let gpu_shape = shape_for(compact.is_some());
        if let Some((t, _)) = &compact {
            k.decls.push(local_array(t.clone(), &f.cb, gpu_shape.tile(wg)));
        }
        self.k = Some(k);
        let lb_none = int(2 * LOOKBACK);
        self.push(Stmt::decl(CType::INT, &f.l, Expr::call("get_local_id", vec![int(0)])));
        // The tile comes from a ticket, not from `get_group_id`: a group only ever waits for
        // tiles whose tickets were taken before its own, by groups therefore already running.
        self.open_if(Expr::bin(BinOp::Eq, v(&f.l), int(0)));
        self.push(Stmt::assign(
            v(&f.tk).index(int(0)),
            Expr::call("atomic_inc", vec![v(&st)]),
        ));
        for (i, x) in [lb_none.clone(), lb_none.clone(), int(0), int(0)]
            .into_iter()
            .enumerate()
        {
            self.push(Stmt::assign(v(&f.lb).index(int(i)), x));
        }
        self.close();
        self.push(Stmt::Barrier(Fence::Local));
        // `f_tn`: the ticket of the next tile, the first one here.
        self.push(Stmt::decl(CType::INT, &f.tn, v(&f.tk).index(int(0))));
        self.push(Stmt::decl(CType::INT, &f.q, int(0)));
        // The kernel's shape is the device's: the host defines `LIFT_GPU` when it builds the
        // program, and the compiler folds the branch it does not take.
        let cx = FilterCx {
            e,
            p,
            xs,
            consumer,
            producer,
            dest,
            st: &st,
            n: &n,
            cap: &cap,
            wg,
            elem_ty: &elem_ty,
            rows,
            len_loc: &len_loc,
            compact: compact.clone(),
        };
        let gpu = Expr::Sym(GPU_MACRO.to_string());
        self.open_if(gpu.clone());
        let (vector, prefetched) = self.tile_loop(&f, gpu_shape, &cx)?;
        self.close();
        self.open_if(Expr::un(crate::ast::UnOp::Not, gpu));
        let cpu_cx = FilterCx {
            compact: None,
            ..cx.clone()
        };
        self.tile_loop(&f, CPU_SHAPE, &cpu_cx)?;
        self.close();
        if let Some(k) = self.k.as_mut() {
            k.notes.push(format!(
                "filterGlb: on a GPU ({GPU_MACRO} = 1) tiles of {} elements, each work-item reading {} consecutive elements a round{}{}; elsewhere tiles of {}, one element a round",
                gpu_shape.tile(wg),
                gpu_shape.chunk,
                if vector { " in one vector load" } else { "" },
                if compact.is_some() {
                    ", its kept values gathered in order in local memory and stored by consecutive work-items, the next tile's ticket and loads issued before the look-back".to_string()
                } else if prefetched {
                    ", the next tile loaded before this one is stored".to_string()
                } else if large && !rows {
                    format!(", the next tile not loaded early (at least {LARGE} elements: fewer registers, more groups resident)")
                } else {
                    String::new()
                } + &if compact_ty.is_some() && compact.is_none() {
                    format!(
                        " (kept values stored in place: gathering them takes {compact_bytes} bytes of local memory, the device has {})",
                        self.wg_limit.local_mem
                    )
                } else {
                    String::new()
                },
                CPU_SHAPE.tile(wg),
            ));
        }
        let _ = device_macros(self);
        let k = self.k.take().expect("set");
        self.finish_kernel(k, e)
    }
}
