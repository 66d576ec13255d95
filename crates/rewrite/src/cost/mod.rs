//! The cost model: what a variant's kernels are estimated to cost, in arbitrary units of about
//! one scalar operation. Lowering (`crate::lower`) computes each kernel's cost beside the code it
//! emits, from the constants and formulas here.
//!
//! Base model: a launch costs `LAUNCH`; a parallel loop of `n` work-items over a body of cost `b`
//! costs `ceil(n / lanes) * b` plus memory traffic `n * MEM`; a sequential loop costs
//! `n * (b + 1)`. A kernel over the rows of a transpose whose rows are arrays reads or writes
//! every element with a stride: `STRIDED` per element more. The other constants refine this for
//! the special forms (local memory, barriers, occupancy) and cite the measurements they were
//! fitted to (files under `bench/results/`, dated). `time` turns a variant's cost into an
//! estimated time on an H200-class device, for comparison across programs.

pub mod stencil;
pub mod time;

use crate::sizes::RegBlockSizes;
use std::collections::BTreeMap;

pub const LAUNCH: f64 = 2000.0;
pub const MEM: f64 = 0.05;
/// Extra cost of an element read or written with a stride of a row in global memory: a GPU
/// moves whole segments (32 bytes) for each 4-byte element, about 8× the coalesced traffic.
pub const STRIDED: f64 = 7.0 * MEM;
/// Elements of 4 bytes in the 32-byte segment a GPU moves for one access.
pub const COALESCED_ELEMS: f64 = 8.0;
/// Cost of reading one element of a row a row apart from the neighbouring work-item's
/// (`Lowerer::row_reads`), and of copying one element into local memory with consecutive
/// work-items at consecutive addresses (`Lowerer::host_staged_rows`).
pub const ROW_STRIDED: f64 = 2.0;
pub const STAGED_COPY: f64 = 0.5;
/// Indices per work-item of a kernel's outermost one-dimensional `mapGlb` over a run-time
/// length (`codegen_opencl`'s `GLB_COARSEN`).
pub const GLB_COARSEN: f64 = 8.0;
/// Elements per vector of a `stage-rows-vec` copy.
pub const VEC_COPY: i64 = 4;
/// Extra cost of one more turn of local memory for a read that `w` work-items of a warp make
/// in one bank (`row_bank_ways`).
pub const LOCAL_READ: f64 = 0.25;
/// Banks of local memory (of 4-byte words) that one access of a warp is served by at once.
pub const LOCAL_BANKS: i64 = 32;

/// How many work-items of a warp read one bank at once when each reads its own unpadded row of
/// `row_len` words in local memory, at the same position: `gcd(row_len, 32)` (1 for an odd
/// length, 2 for k-means' 34 features). A length not known at compile time counts 1.
pub fn row_bank_ways(row_len: &arith::ArithExpr, sizes: &BTreeMap<String, i64>) -> f64 {
    let Some(l) = crate::sizes::estimate(row_len, sizes, 0).filter(|&l| l > 0) else {
        return 1.0;
    };
    let (mut a, mut b) = (l, LOCAL_BANKS);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as f64
}

/// Local memory traffic and a barrier of one step of a work-group's tree, per work-item.
pub const TREE_STEP: f64 = 6.0;
/// How much slower a work-group reads a row of a transposed array (a stride of a whole row
/// between work-items, no coalescing) than a row of a plain one.
pub const UNCOALESCED: f64 = 8.0;

/// Local memory traffic, a barrier and the index arithmetic of a column block's partial
/// results, per work-item.
pub const COL_PARTIALS: f64 = 4.0;

/// Work-items a GPU keeps resident, in units of the cost model's `lanes` (an H200: 132 SMs ×
/// 2048): below it, a column block's loop of dependent loads leaves memory latency uncovered.
/// Measured on an H200 (gemv T, 8192²): 32K work-items 0.259 ms, 65K 0.142, 131K 0.104 (with
/// the second kernel), 262K 0.080, 524K 0.083; the square root of the shortfall follows that.
pub const COL_RESIDENT_LANES: f64 = 8.0;

/// Per-group cost of the one-launch whole-array reduction beyond its tree: the groups' tickets
/// are atomics on one global word, which the device serializes (a thousand of them about a
/// quarter of a launch).
pub const GRID_TICKET: f64 = 0.5;

/// Lanes of the vectors in which a register-blocked product reads its local tiles.
pub const VEC: i64 = RegBlockSizes::VEC;

/// Whether a register-blocked product keeps `x`'s tile K-major in local memory: each step of
/// K a work-item reads its `rm` values of `x` as `rm / VEC` vectors down a column of the tile,
/// and holds `rm` values of `x` at a time instead of `rm` vectors along K. On the H200 at
/// 4096³ the 128×128/8×8 product by steps of 8 took 3.10 ms so (its rows padded,
/// `codegen_opencl` `gen_pipelined`; 3.30 unpadded) against 3.32 with `x`'s tile row-major;
/// the 128×64/8×4/16 one, narrower in `ys` than in `x`, 3.54 against 3.44
/// (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed3-10001e0.md`).
pub fn a_kmajor(rb: RegBlockSizes) -> bool {
    rb.rm % VEC == 0 && rb.rn >= rb.rm
}

/// What a register-blocked product's work-items pay for their registers: `ALONE` when fewer
/// than two groups of `group` fit in an SM's registers, else 1. A work-item holds its block,
/// the `rm` vectors of x (`rm` values from a K-major tile) and the `rn` values of ys of a step,
/// and its share of the next tiles (loaded ahead, `codegen_opencl` `gen_pipelined`), besides
/// indices and addresses, fewer where both tiles are copied as vectors (`vectors`).
pub fn rblock_occupancy(rb: RegBlockSizes, group: f64, vectors: bool) -> f64 {
    let (rm, rn, v) = (rb.rm as f64, rb.rn as f64, VEC as f64);
    let a_held = if a_kmajor(rb) { rm } else { rm * v };
    let addresses = if vectors { VECTOR_ITEM_ADDRESSES } else { ITEM_ADDRESSES };
    let regs = rm * rn + a_held + rn + (rb.tm * rb.tk + rb.tk * rb.tn) as f64 / group + addresses;
    if SM_REGISTERS / (regs * group) < 2.0 {
        ALONE
    } else {
        1.0
    }
}

/// The registers of an SM (the H200's), shared by the work-groups resident on it.
pub const SM_REGISTERS: f64 = 65536.0;
/// Registers a work-item of a register-blocked product holds besides its values (indices,
/// addresses): `ptxas -v` counted 125 to 133 registers for the K-major 8×8 blocks whose values
/// `host_rblock` counts as 88 to 104 (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed3-10001e0.md`).
pub const ITEM_ADDRESSES: f64 = 35.0;
/// `ITEM_ADDRESSES` where both tiles are copied as `float4`s, a quarter of the global addresses:
/// `ptxas -v` counted 128 registers for the 128×128/8×8/16 product so copied, whose values
/// `host_rblock` counts as 96 (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed4-0809ecf.md`).
pub const VECTOR_ITEM_ADDRESSES: f64 = 32.0;
/// Per warp of a work-group, what its barrier at each step of K costs a work-item: the
/// barrier waits for every warp of the group, and fewer, smaller groups cover each other's
/// waits. On the H200 at 4096³ the 8×8 blocks by groups of 128 (64×128 and 128×64 tiles,
/// K by 8) took 3.04 and 3.08 ms against 3.10 for groups of 256 (128×128), though each of
/// their work-items copies half as much again of the tiles (`Lowerer::rblock_cost`).
pub const BARRIER_WARP: f64 = 4.0;
/// Most multiply-adds of one step of K unrolled without cost (`LONG_STEP` beyond): on the
/// H200 each 8×8 product by steps of 16 (1,024 multiply-adds a step) was 1–2 % slower than
/// the same by steps of 8 (3.13 against 3.10 ms, 3.15 against 3.08, mm_tn 3.11 against 3.06,
/// mm_nt 3.21 against 3.16), whose fewer barriers should have made it faster. Not the length of the source: the
/// step as a `#pragma unroll` loop (`codegen_opencl` `gen/regblock.rs`) gave the same PTX and
/// time as written out (3.133 ms, 128×128/8×8/16, `bench/results/runs/nvidia-h200-2026-11-24-mm-speed4-0809ecf.md`). With the tiles copied as
/// `float4`s (`vector_copy`) the balance turned: 128×128/8×8 by 16 took 2.911 ms against 3.004
/// by 8 (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed4-0809ecf.md`).
pub const UNROLLED_FMAS: f64 = 512.0;
pub const LONG_STEP: f64 = 1.05;
/// A group alone on its SM (no other group's arithmetic covers its barriers and local reads):
/// on the H200 at 4096³ the 128×128/8×8/16 product (about 120 values per work-item) took
/// 4.33 ms, the 128×64/8×4/16 one (about 80) 3.85 ms, though it reads local memory more per
/// multiply-add (`bench/results/runs/nvidia-h200-2026-11-24-mm-speed2-2c9598c.md`).
pub const ALONE: f64 = 1.25;

/// Per work-item: the two barriers of a tile and the accumulator's round trip through local
/// memory (the work-group's `reduceSeq` keeps it there).
pub const TILE_STEP: f64 = 8.0;
/// What reading an element of a tile from local memory saves against the global read of the
/// same element by every work-item (through the cache, all work-items of a group at once).
pub const REUSED_READ: f64 = 1.0;

/// Floats in a 128-byte line, what one transaction of a warp's global load moves.
pub const LINE_FLOATS: i64 = 32;
/// A tile element's copy into local memory: its global load and local store.
pub const TILE_ELEM: f64 = 1.0;
/// A line of a tile read from global memory per step of K, fitted with `TILE_ELEM` and
/// `BARRIER_WARP` to the order of the H200's 8×8 products at 4096³ (`Lowerer::rblock_cost`).
pub const TILE_LINE: f64 = 32.0;

/// The share of an SM's work-item slots (`SM_ITEMS`) that work-groups of `s` work-items fill,
/// as if at most `RESIDENT_GROUPS` of them were resident: a work-group reduction's loads in
/// flight, what bounds it, scale with it. On the H200 gemv_bias's rows of 3000 (10000 groups)
/// took 0.0658 ms by 64 work-items (chunks of 48, read four at a time), 0.0350 by 128 (24)
/// and 0.0427 by 256 (`bench/results/runs/nvidia-h200-2026-11-24-cost-model2-51c6044.md`); every
/// tuned best of the suite's work-group reductions is by 128 or 256.
pub fn wg_occupancy(s: i64) -> f64 {
    ((s * RESIDENT_GROUPS) as f64 / SM_ITEMS).min(1.0)
}

/// Work-item slots of an SM (the H200's).
pub const SM_ITEMS: f64 = 2048.0;
/// Work-groups resident on an SM at most, as the H200's work-group reductions ran
/// (`wg_occupancy`).
pub const RESIDENT_GROUPS: i64 = 16;

/// What the barrier that ends each work-group of a `mapWrg × mapLcl` kernel (a global memory
/// fence, `codegen_opencl`'s) costs each of its work-items, whatever the group's size (counted
/// per warp it would rank sub-warp groups first, which `under` charges for idle lanes): a
/// `mapGlb` has none. nn's pairs (33.5 M) took 0.1020 ms on the H200 by `mapGlb` (groups of
/// 128) against 0.1664 by `mapWrg 262144 × mapLcl 128`, which the model had ranked equal and
/// first (`bench/results/HISTORY.md`, suite run D; `runs/nvidia-h200-2026-11-24-final-rows-6781e23.md`).
pub const GROUP_END_BARRIER: f64 = BARRIER_WARP;

/// What a kernel whose work-items run loops of their own (`iterate`, `iterate-until` inside a
/// work-item) waits for beyond its waves of work-items, in waves of its per-item cost
/// (`Lowerer::loop_waves`): its busiest work-item's chain of dependent steps, which ends the
/// kernel after the others are done, and grows with the elements a work-item runs one after
/// another. Fitted to Mandelbrot at 4096² on the H200, up to 1000 steps
/// (`bench/results/loops-nvidia-h200-2026-12-02.md`): a point per work-item (16.8 M work-items,
/// 512 waves) took 1.20 ms, 64 points per work-item (262144, 8 waves) 2.95 ms (2.46×, 11.7
/// waves more), 128 (131072, 4 waves) 5.62 ms (4.68×, 14.7 waves more).
pub const LOOP_SPAN_WAVES: f64 = 13.0;
