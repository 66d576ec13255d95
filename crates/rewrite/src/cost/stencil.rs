//! The cost of a tiled stencil's work-item (`lower::stencil`), beside the default mapping's:
//! both pay the function (`gc`) and the write of the output; a tile staged in local memory
//! pays its share of the tile's copy and two barriers, and saves, for each element of the
//! window the function reads, the global read (through the caches, by every work-item of a
//! neighbourhood) that a local read replaces.

use super::{BARRIER_WARP, GROUP_END_BARRIER, REUSED_READ, TILE_ELEM};

/// A work-item of a staged tile: its share `copied` of the tile's copy into local memory
/// (`TILE_ELEM` per element), the barrier after the copy and the one that ends the group, less
/// `REUSED_READ` for each of the `reads` window elements it then reads from local memory.
/// Never below a tenth of the copy and barriers, so that no tile is free.
pub fn staged_item(copied: f64, reads: f64) -> f64 {
    let paid = copied * TILE_ELEM + BARRIER_WARP + GROUP_END_BARRIER;
    (paid - reads * REUSED_READ).max(0.1 * paid)
}

/// A work-item of an unstaged tile: the barrier that ends its group (`mapWrg × mapLcl`), and
/// nothing saved: its window is read from global memory as the default mapping reads it.
pub const UNSTAGED_ITEM: f64 = GROUP_END_BARRIER;
