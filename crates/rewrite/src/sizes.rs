//! Sizes shared by the rules, extraction and lowering: whether a length may be split, its
//! estimate from the known sizes, the packed parameters of register-blocked products and of
//! grid reductions, and the limits on what is staged in local memory or unrolled. Nothing
//! here depends on another module of the crate.

use arith::ArithExpr;
use std::collections::BTreeMap;

/// Whether `k` may split an array of length `len`: provably divides, or (symbolic length) is
/// left to the run-time size check; with known sizes, it must divide and be smaller.
pub fn may_split(len: &ArithExpr, k: i64, sizes: &BTreeMap<String, i64>, declared: &[String]) -> bool {
    let kk = ArithExpr::cst(k);
    if !len.free_vars().iter().all(|v| declared.contains(v)) {
        return false;
    }
    match len.eval(&|n| sizes.get(n).copied()) {
        Ok(n) => n > k && n % k == 0,
        Err(_) => len.as_cst().is_none() && (len.is_multiple_of(&kk) || len.free_vars().len() == 1),
    }
}

/// Bytes of local memory one staged tile may take (two are staged per work-group).
pub const STAGE_BYTES: i64 = 16 * 1024;

/// Longest row (bytes, taking 4 per element) that `stage-rows` stages: each work-item's row is
/// its share of the work-group's local memory, which bounds how many work-items a GPU keeps
/// resident. Measured on an H200: k-means' 136-byte rows staged ran in 0.137 ms against 0.200
/// unstaged, md's 512-byte neighbour lists in 0.936 against 0.834 (33 KB per group of 64 leaves
/// an SM about 440 resident work-items of 2048, and md waits on its gathers).
pub const STAGED_ROW_BYTES: i64 = 256;

/// The sizes of a register-blocked matrix product (`rblock`): work-groups compute `tm × tn`
/// tiles of the result, each work-item an `rm × rn` block of its tile, over steps of `tk`
/// along the dot products (Lift's `tileMapMap`, `finishTiling` and `apply2DRegisterBlocking`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegBlockSizes {
    pub tm: i64,
    pub tn: i64,
    pub rm: i64,
    pub rn: i64,
    pub tk: i64,
}

impl RegBlockSizes {
    /// Lanes of the vectors in which the local tiles are read (`lower::rblock`): `float4`, the
    /// widest load a work-item issues to local memory in one instruction.
    pub const VEC: i64 = 4;

    /// `tm`, `tn`, `tk` below 2^12, `rm`, `rn` below 2^8: one number for the e-graph node.
    pub fn pack(self) -> i64 {
        self.tm | self.tn << 12 | self.tk << 24 | self.rm << 36 | self.rn << 44
    }

    pub fn unpack(c: i64) -> RegBlockSizes {
        RegBlockSizes {
            tm: c & 0xfff,
            tn: (c >> 12) & 0xfff,
            tk: (c >> 24) & 0xfff,
            rm: (c >> 36) & 0xff,
            rn: (c >> 44) & 0xff,
        }
    }

    pub fn name(self) -> String {
        format!("{}x{}-{}x{}-k{}", self.tm, self.tn, self.rm, self.rn, self.tk)
    }

    /// Work-items of a work-group: one per block of its tile.
    pub fn items(self) -> i64 {
        (self.tm / self.rm) * (self.tn / self.rn)
    }

    pub(crate) fn valid(self) -> bool {
        [self.tm, self.tn, self.rm, self.rn, self.tk].iter().all(|&x| x >= 1)
            && self.tm < 1 << 12
            && self.tn < 1 << 12
            && self.tk < 1 << 12
            && self.rm < 1 << 8
            && self.rn < 1 << 8
            && self.tm % self.rm == 0
            && self.tn % self.rn == 0
            // K's steps and each work-item's columns are whole vectors
            && self.tk % Self::VEC == 0
            && self.rn % Self::VEC == 0
            // each work-item copies the same number of elements of each tile
            && (self.tm * self.tk) % self.items() == 0
            && (self.tk * self.tn) % self.items() == 0
    }
}

/// The value of a length with the known sizes, other size variables taken as `default`.
pub fn estimate(e: &ArithExpr, sizes: &BTreeMap<String, i64>, default: i64) -> Option<i64> {
    e.eval(&|n| Some(sizes.get(n).copied().unwrap_or(default))).ok()
}

/// Longest loop `unroll-reduce` unrolls.
pub const MAX_UNROLL: i64 = 16;

/// Set in an `rblock`'s packed sizes (above `RegBlockSizes::pack`'s fields) when the product is
/// written without `join`: `rblock c r g x ys` is then `map (λr. map g ys) x`, each element of
/// a row the one-element array that `g`'s reduction returns (`reg-block-rows-*`).
pub const RBLOCK_ROWS: i64 = 1 << 56;

/// `gridreduce`'s number of groups carries, shifted left by this, the width of the vectors its
/// work-items read (`grid-reduce-v*`); 0 (or 1) for scalars.
pub const GRID_LANES_SHIFT: u32 = 40;

/// Set in an `rblock`'s packed sizes (beside `RBLOCK_ROWS`) when the product is the body of a
/// map over a batch, `map (λab. rblock c r g x ys) xs` with `x` and `ys` read from `ab`
/// (`batch-reg-block-*`): lowered with the batch as the third dimension of the grid, each
/// element's tiles a `mapWrg1 × mapWrg0` inside `mapWrg2`. The flag changes no meaning.
pub const RBLOCK_BATCH: i64 = 1 << 57;

/// Set in an `rblock`'s packed sizes when its tiles are computed on tensor cores
/// (`rules::tensor`, `mma-block-*`): each work-group's tile is the product of the tile written
/// at work-group level, which code generation maps to TF32 `mma.sync` fragments.
pub const RBLOCK_MMA: i64 = 1 << 58;

/// Most rows of work-items of a transpose tile's work-group (`rules::tiling::TransposeTile`):
/// each work-item moves `t / ttile_rows(t)` elements of a `t × t` tile.
const TTILE_ROWS: i64 = 8;

/// Rows of work-items of the work-group of a `t × t` transpose tile.
pub fn ttile_rows(t: i64) -> i64 {
    t.min(TTILE_ROWS)
}
