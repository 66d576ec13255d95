//! Tensor-core matrix products (`mma-block-*`, `mma-block-rows-*`, `batch-mma-block-*`): a
//! register-blocked product's tiles, one rule per tile shape, computed by a work-group's warps
//! on TF32 tensor cores, alone or under a map over a batch. The rules are in the set only
//! when `Options::tensor_cores` holds (`--precision tf32` on an NVIDIA device of compute
//! capability 8.0 or later): TF32 products are a permission of the user's, never a rewrite of
//! the program's meaning in f32.

use super::{not_free_in, pat, var};
use crate::egraph::{Lift, LiftAnalysis, DOT_FN, EG, FLOAT_ROWS};
use crate::sizes::{RegBlockSizes, RBLOCK_MMA, RBLOCK_ROWS};
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// The tiles a work-group may compute, `tm × tn` (rows of `x` × rows of `ys`): one warp per
/// 64 × 64 part (`codegen_opencl`'s tensor-core generation, `gen/mma.rs`), so 4 or 8 warps.
/// Each is a variant of its own, which `lift tune` times against the others.
pub const MMA_TILES: [(i64, i64); 3] = [(128, 128), (128, 256), (256, 128)];
/// K must be a multiple of this: the generation stages K in steps of 32, 16 or 8.
pub const MMA_TK: i64 = 32;
/// A warp's part of the tile.
pub const MMA_WARP: i64 = 64;

/// Words in the description of every tensor-core variant (`lower/mma.rs`): `lift tune
/// --precision tf32` times each such variant, whatever the cost model's cut.
pub const TENSOR_CORE_NOTE: &str = "on tensor cores";

/// The sizes an `rblock` of the tensor-core variant carries (its name in descriptions): the
/// tile, the warp's part, the multiple of K.
pub fn mma_sizes(tm: i64, tn: i64) -> RegBlockSizes {
    RegBlockSizes {
        tm,
        tn,
        rm: MMA_WARP,
        rn: MMA_WARP,
        tk: MMA_TK,
    }
}

/// `mma-block-*`, `mma-block-rows-*` and `batch-mma-block-*` for each tile of [`MMA_TILES`],
/// when tensor cores may be used.
pub fn mma_block_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    if !opts.tensor_cores {
        return vec![];
    }
    let mut rules = vec![];
    for (tm, tn) in MMA_TILES {
        let c = mma_sizes(tm, tn);
        // map (λr. join (map g ys)) x = rblock (MMA) r g x ys, g a dot product, x and ys
        // matrices of floats, tm | rows of x, tn | rows of ys, 32 | K, all three known
        rules.push(
            Rewrite::new(
                format!("mma-block-{}", c.name()),
                pat("(map (lam ?r (join (map ?g ?c))) ?x)"),
                MmaBlock { c, rows: false },
            )
            .expect("rule"),
        );
        // map (λr. map g ys) x = rblock (MMA | ROWS) r g x ys, with the same conditions
        rules.push(
            Rewrite::new(
                format!("mma-block-rows-{}", c.name()),
                pat("(map (lam ?r (map ?g ?c)) ?x)"),
                MmaBlock { c, rows: true },
            )
            .expect("rule"),
        );
        // map (λab. P) xs = map (λab. rblock (MMA | BATCH) r g x ys) xs, P a product of
        // `batch-reg-block-*`'s forms with the conditions above and that rule's (x and ys
        // views of ab)
        rules.push(super::regblock::batch_mma_rule(c));
    }
    rules
}

/// See `mma-block-*`. The lengths must be known (`Options::sizes`): the kernel is built for
/// them, and a tile the lengths do not divide leaves the product to the f32 variants.
struct MmaBlock {
    c: RegBlockSizes,
    rows: bool,
}

/// Whether the known value of `len` is a positive multiple of `k`.
pub(super) fn known_multiple(len: &Option<ArithExpr>, k: i64, an: &LiftAnalysis) -> bool {
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
            && known_multiple(&xd.len, self.c.tm, an)
            && known_multiple(&yd.len, self.c.tn, an)
            && known_multiple(&xd.inner, self.c.tk, an);
        if !admits {
            return vec![];
        }
        let flags = RBLOCK_MMA | if self.rows { RBLOCK_ROWS } else { 0 };
        let cfg = eg.add(Lift::Num(self.c.pack() | flags));
        let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}
