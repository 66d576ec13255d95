//! What the stencil forms (`lower::stencil`) cost beside the other mappings of their map,
//! fitted to one H200 run of the suite's programs at their CGO'18 sizes
//! (`bench/results/stencil-rules-nvidia-h200-2026-12-02.md`, `lift tune --top 8`):
//!
//! - a column of `v` outputs a work-item from its strip in registers was the fastest of every
//!   program timed (Jacobi 2-D 5-point 0.144 ms, 9-point 0.153, Gaussian 0.196, 3-D 7-point
//!   0.347, against a copy of 0.133 and 0.27 ms): it is charged as the model charges a chunked
//!   `mapGlb` (global traffic per work-item, not per output), a quarter of it, with its strip's
//!   loads per work-item;
//! - a 3-D block of 4 planes × 4 rows a work-item (heat3d: 0.306 ms, a copy 0.282, against
//!   0.347 for its column of 4; `bench/results/stencil-fast-nvidia-h200-2026-12-02.md`) is
//!   charged as the column, per work-item of `v·w` outputs, its strip's loads included;
//! - a tile read where it lies (`/global`) took 0.245–0.265 ms in 2-D, beside 0.226–0.360 for
//!   the default `mapGlb1 × mapGlb` of chunks of 4: charged per output as that mapping's
//!   traffic would be without chunks (`MEM` each);
//! - a tile staged in local memory took 0.40–0.41 ms in 2-D and 1.26 ms in 3-D (2×4×32), 1.6
//!   and 2.5 times the unstaged tile: the copy's index arithmetic, its second partial pass and
//!   the barrier cost more than the reads the caches would have served (`STAGED_TRAFFIC`).

use super::{BARRIER_WARP, GROUP_END_BARRIER, LOCAL_READ};

/// Per work-item of a staged tile: the barrier after the copy and the one ending the group.
pub const STAGED_BARRIERS: f64 = BARRIER_WARP + GROUP_END_BARRIER;
/// Per work-item, one element of its window read from local memory (a turn of local memory,
/// as `LOCAL_READ`).
pub const LOCAL_WINDOW_READ: f64 = LOCAL_READ;
/// A staged tile's global traffic per output against an unstaged tile's: the measured ratio
/// of their times in 2-D (0.40 against 0.25 ms).
pub const STAGED_TRAFFIC: f64 = 1.6;
/// A column's global traffic per work-item against `MEM`.
pub const COLUMN_TRAFFIC: f64 = 0.25;
/// A zipped stencil's grid (one point per output, read once down each column) against the
/// strip's traffic: a plain copy of its bytes, where the strip reads `(v-1)·s+n` rows per `v`.
pub const ZIPPED_GRID_TRAFFIC: f64 = 1.0;
/// Per element of a column's strip, its load into private memory: half an operation, as the
/// strips of neighbouring work-items overlap in the caches and the elements no window point
/// reads are never loaded (a 13-point star reads about 20 of the 150 elements of its 6×5×5
/// strip of two outputs, whose column a whole operation per element ranked below the default
/// mapping that the H200 ran at 28.9× a copy).
pub const STRIP_LOAD: f64 = 0.5;
