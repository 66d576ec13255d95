//! Tensor-core matrix products (`mma-block`, `mma-block-rows`): a register-blocked product's
//! tiles computed by a work-group's warps on TF32 tensor cores. The rules are in the set only
//! when `Options::tensor_cores` holds (`--precision tf32` on an NVIDIA device of compute
//! capability 8.0 or later): TF32 products are a permission of the user's, never a rewrite of
//! the program's meaning in f32.

use super::{not_free_in, pat, var};
use crate::egraph::{Lift, LiftAnalysis, DOT_FN, EG, FLOAT_ROWS};
use crate::sizes::{RegBlockSizes, RBLOCK_MMA, RBLOCK_ROWS};
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// Rows and columns of the tile a work-group computes, and the steps of K staged at once: the
/// shape `codegen_opencl`'s tensor-core generation (`gen/mma.rs`) takes, 8 warps of 64 × 32.
pub const MMA_TILE: i64 = 128;
pub const MMA_TK: i64 = 32;

/// The sizes an `rblock` of the tensor-core variant carries (its name in descriptions).
pub fn mma_sizes() -> RegBlockSizes {
    RegBlockSizes {
        tm: MMA_TILE,
        tn: MMA_TILE,
        rm: 16,
        rn: 8,
        tk: MMA_TK,
    }
}

/// `mma-block` and `mma-block-rows`, when tensor cores may be used.
pub fn mma_block_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    if !opts.tensor_cores {
        return vec![];
    }
    vec![
        // map (λr. join (map g ys)) x = rblock (MMA) r g x ys, g a dot product, x and ys
        // matrices of floats, 128 | rows of x, 128 | rows of ys, 32 | K, all three known
        Rewrite::new(
            "mma-block",
            pat("(map (lam ?r (join (map ?g ?c))) ?x)"),
            MmaBlock { rows: false },
        )
        .expect("rule"),
        // map (λr. map g ys) x = rblock (MMA | ROWS) r g x ys, with the same conditions
        Rewrite::new(
            "mma-block-rows",
            pat("(map (lam ?r (map ?g ?c)) ?x)"),
            MmaBlock { rows: true },
        )
        .expect("rule"),
    ]
}

/// See `mma-block`. The lengths must be known (`Options::sizes`): the kernel is built for
/// them, and a tile the lengths do not divide leaves the product to the f32 variants.
struct MmaBlock {
    rows: bool,
}

/// Whether the known value of `len` is a positive multiple of `k`.
fn known_multiple(len: &Option<ArithExpr>, k: i64, an: &LiftAnalysis) -> bool {
    len.as_ref()
        .and_then(|n| n.eval(&|v| an.sizes.get(v).copied()).ok())
        .is_some_and(|n| n >= k && n % k == 0)
}

impl Applier<Lift, LiftAnalysis> for MmaBlock {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (r, g, ys, x) = (s[var("?r")], s[var("?g")], s[var("?c")], s[var("?x")]);
        let (xd, yd, an) = (&eg[x].data, &eg[ys].data, &eg.analysis);
        let admits = not_free_in(eg, r, &[ys])
            && eg[g].data.flags & DOT_FN != 0
            && xd.flags & FLOAT_ROWS != 0
            && yd.flags & FLOAT_ROWS != 0
            && known_multiple(&xd.len, MMA_TILE, an)
            && known_multiple(&yd.len, MMA_TILE, an)
            && known_multiple(&xd.inner, MMA_TK, an);
        if !admits {
            return vec![];
        }
        let flags = RBLOCK_MMA | if self.rows { RBLOCK_ROWS } else { 0 };
        let cfg = eg.add(Lift::Num(mma_sizes().pack() | flags));
        let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}
