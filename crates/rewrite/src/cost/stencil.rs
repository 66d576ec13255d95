//! What a tiled stencil (`lower::stencil`) costs beside the other mappings of its map. The
//! model charges a kernel `MEM` per work-item for its global traffic; for a map over the
//! windows of `slide` that traffic is, per output, the window read from global memory (through
//! the caches) and the output written. A tile staged in local memory reads its input tile and
//! halo once per work-group instead, `copied = tile_elems / group` elements per output (1.33
//! for an 8×32 tile of 3×3 windows against 9), and each window from local memory: its traffic
//! per output is `(copied + 1) / (window + 1)` of the unstaged one's. That is the reuse the
//! default mapping leaves to the caches; on the H200 that mapping ran the suite's 2-D stencils
//! at 1.67–4.05× a copy of their bytes and the 3-D ones at 16–73×
//! (`bench/results/stencil-nvidia-h200-2026-12-01.md`).

use super::{BARRIER_WARP, GROUP_END_BARRIER, LOCAL_READ};

/// Per work-item of a staged tile: the barrier after the copy and the one ending the group.
pub const STAGED_BARRIERS: f64 = BARRIER_WARP + GROUP_END_BARRIER;
/// Per work-item, one element of its window read from local memory (a turn of local memory,
/// as `LOCAL_READ`).
pub const LOCAL_WINDOW_READ: f64 = LOCAL_READ;

/// The global traffic of a staged tile's output relative to an unstaged one's: `copied`
/// elements of the tile read per output and the output written, against the `window`
/// elements and the output.
pub fn staged_traffic(copied: f64, window: f64) -> f64 {
    (copied + 1.0) / (window + 1.0)
}
