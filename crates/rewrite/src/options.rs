//! The options of exploration: the factors the rules try, the limits of saturation and
//! extraction, the known sizes, and the parameters of the cost model's machine.

use crate::sizes::RegBlockSizes;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    /// Tuning factors for `split` (tiles, chunks of partial reductions).
    pub split_factors: Vec<i64>,
    pub vector_width: u8,
    /// Per phase.
    pub iter_limit: usize,
    pub node_limit: usize,
    pub time_limit: Duration,
    /// How many variants to keep.
    pub top_k: usize,
    /// Distinct terms kept per e-class during extraction.
    pub per_class: usize,
    /// Known sizes: divisibility side conditions are decided with them; other sizes are
    /// symbolic (a split then becomes a run-time size check) and cost `default_size`.
    pub sizes: BTreeMap<String, i64>,
    pub default_size: i64,
    /// Work-items that run at once, for the cost model.
    pub lanes: f64,
    /// Numbers of strided chunks (work-items) for partial reductions over strided chunks.
    pub stride_targets: Vec<i64>,
    /// Lengths of the tiles along the dot products of a work-group block (`ktile-*`).
    pub ktile_factors: Vec<i64>,
    /// Sizes of the 2-D work-group tiles (each dimension).
    pub tile_factors: Vec<i64>,
    /// Sizes of the square tiles of a transpose staged in local memory (`transpose-tile-*`).
    pub transpose_tiles: Vec<i64>,
    /// Most work-items in one work-group.
    pub max_group: i64,
    /// Work-group sizes of cooperative reductions (`wg-reduce-*`, `wg-partial-*`): powers of 2.
    pub wg_sizes: Vec<i64>,
    /// Elements each work-item reduces in a whole-array cooperative reduction (`wg-partial-*`),
    /// as targets: the largest divisor of the length per work-item not above each.
    pub wg_items: Vec<i64>,
    /// Only the rules whose names contain one of these (all rules when empty): to test rules
    /// one at a time.
    pub only_rules: Vec<String>,
    /// Normalise the program's formulations before saturation (`crate::normalise`). Off only to
    /// test rules on the spellings that normalisation would otherwise take away from them.
    pub normalise: bool,
    /// Tile lengths of an array every work-item of a group reads whole, staged in local
    /// memory tile by tile (`reuse-tiles-*`).
    pub reuse_tiles: Vec<i64>,
    /// Columns per work-group of a column-block reduction (`col-reduce-*`): consecutive
    /// work-items read consecutive columns of a row.
    pub col_blocks: Vec<i64>,
    /// Row chunks per work-group of a column-block reduction (`col-reduce-*`): the work-items
    /// that share a column.
    pub col_rows: Vec<i64>,
    /// Work-groups per block of columns of a column-block reduction (`col-reduce-*`), each
    /// over every `g`-th row; above 1, a second kernel reduces their partial results.
    pub col_groups: Vec<i64>,
    /// Numbers of work-groups of a whole-array reduction in one launch (`grid-reduce-*`):
    /// multiples of the compute units of the GPUs we run on (132 on the H200), up to the 8
    /// groups of 256 work-items that one of its compute units holds at once.
    pub grid_groups: Vec<i64>,
    /// Tile and block sizes of register-blocked matrix products (`reg-block-*`).
    pub reg_blocks: Vec<RegBlockSizes>,
    /// Rows per work-item of a map whose reduction reads an array in tiles (`reuse-tiles-T-bB`,
    /// above 1): each element read from local memory is folded into that many rows' results.
    /// Two by default: on an H200, once n-body's step lost its dead w-lane arithmetic
    /// (`bench/results/runs/nvidia-h200-2026-11-24-nbody-speed2-efb1e9c.md`), two rows per
    /// work-item in groups of 64 took 11.64 ms against 12.33 for the best one-row variant;
    /// before that they tied (13.52 against 13.44, `...-nbody.md`), and four rows lost (20.4 ms).
    pub reuse_blocks: Vec<i64>,
    /// The sizes the kernels will be built for (`lift::Options::specialise`; empty: generic
    /// kernels): variants are validated with them (`validate::validate_with`), so a private
    /// array or an unrolled loop of a length they fix is a legal variant.
    pub built_in: BTreeMap<String, i64>,
    /// Tile and block sizes of register-blocked matrix products under a map over a batch
    /// (`batch-reg-block-*`): small products, one tile each (`bench/indep/bmm.lisp`, 32³).
    pub batch_blocks: Vec<RegBlockSizes>,
    /// Matrix products may be computed on TF32 tensor cores (`--precision tf32` on an NVIDIA
    /// device of compute capability 8.0 or later): the `mma-block-*` rules (`rules::tensor`).
    pub tensor_cores: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            split_factors: vec![4, 16, 64, 128],
            vector_width: 4,
            iter_limit: 8,
            node_limit: 20_000,
            time_limit: Duration::from_secs(60),
            top_k: 8,
            per_class: 8,
            sizes: BTreeMap::new(),
            default_size: 1024,
            lanes: 32768.0,
            only_rules: vec![],
            normalise: true,
            tile_factors: vec![4, 8, 16],
            ktile_factors: vec![8, 16, 32],
            stride_targets: vec![2048, 16384, 131072],
            max_group: 256,
            wg_sizes: vec![64, 128, 256],
            wg_items: vec![128, 1024],
            transpose_tiles: vec![16, 32],
            reuse_tiles: vec![64, 256],
            // measured on an H200 (gemv T, 8192²): 32×8 work-items beat 32×4 and 64×4, and
            // larger work-groups were refused there (256 at most for this kernel); 4 groups per
            // block of columns beat 8, 2 and 1
            col_blocks: vec![32],
            col_rows: vec![8],
            col_groups: vec![1, 4, 8],
            grid_groups: vec![264, 528, 1056],
            reg_blocks: [
                (128, 128, 8, 8, 16),
                (128, 128, 8, 8, 8),
                (64, 64, 4, 4, 16),
                (128, 64, 8, 4, 16),
                (64, 128, 8, 8, 8),
                (128, 64, 8, 8, 8),
            ]
            .map(|(tm, tn, rm, rn, tk)| RegBlockSizes { tm, tn, rm, rn, tk })
            .to_vec(),
            reuse_blocks: vec![2],
            built_in: BTreeMap::new(),
            // a 32 × 32 product per work-group: 256 work-items of 1 × 4 outputs, or 128 of
            // 2 × 4; 64 × 64 products by 256 work-items of 4 × 4
            batch_blocks: [(32, 32, 1, 4, 32), (32, 32, 2, 4, 32), (64, 64, 4, 4, 16)]
                .map(|(tm, tn, rm, rn, tk)| RegBlockSizes { tm, tn, rm, rn, tk })
                .to_vec(),
            tensor_cores: false,
        }
    }
}
