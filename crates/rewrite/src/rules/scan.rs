//! Scans (`scan f z xs`, the inclusive prefix): where each is computed. They hold for every
//! associative `f` with `z` its neutral element (the language's contract for `scan`), so their
//! side conditions only keep variables in scope and read maps inline where code generation can.
//! Encoding gives the `scan` node only to scans of scalars or vectors (the ones `scanGlb` runs);
//! a scan left as written is `scanSeq` inside a work-item, one work-item a row under a map.

use super::{conditional, not_free_in, var};
use crate::egraph::{Lift, LiftAnalysis, EG};
use egg::{Id, Rewrite, Subst};

/// Whether the class holds an opaque function: a lambda without array primitives, scalar code
/// that a kernel can apply to each element as it loads or stores it.
fn leaf_fn(eg: &EG, id: Id) -> bool {
    eg[id].nodes.iter().any(|n| matches!(n, Lift::Sym(_)))
}

pub fn scan_rules() -> Vec<Rewrite<Lift, LiftAnalysis>> {
    vec![
        // scan f z xs = scanglb f z xs: the whole array in one launch, tiles ordered by a
        // decoupled look-back (no condition: every encoded scan has scalar or vector elements).
        // With xs = map g ys the map is applied as each element is loaded, so `scan f z (map g
        // ys)` is that same one launch (the map fused before the scan).
        egg::rewrite!("scan-glb"; "(scan ?f ?z ?x)" => "(scanglb ?f ?z ?x)"),
        // map (λr. scan f z r) xss = scanrows f z xss, r free in neither f nor z: every row by
        // tiles in one launch, each tile's look-back stopping at its row's first tile.
        conditional(
            "scan-rows".into(),
            "(map (lam ?r (scan ?f ?z ?r)) ?x)",
            "(scanrows ?f ?z ?x)".into(),
            |eg: &mut EG, _: Id, s: &Subst| not_free_in(eg, s[var("?r")], &[s[var("?f")], s[var("?z")]]),
        ),
        // map (λr. scan f z (map g r)) xss = scanrows f z (map (mapf g) xss), r free in none of
        // f, z, g, and g a leaf function: the map before the scan read inline, row by row.
        conditional(
            "scan-rows-map".into(),
            "(map (lam ?r (scan ?f ?z (map ?g ?r))) ?x)",
            "(scanrows ?f ?z (map (mapf ?g) ?x))".into(),
            |eg: &mut EG, _: Id, s: &Subst| {
                leaf_fn(eg, s[var("?g")]) && not_free_in(eg, s[var("?r")], &[s[var("?f")], s[var("?z")], s[var("?g")]])
            },
        ),
        // map h (scanglb f z xs) = mapscan h (scanglb f z xs), h a leaf function: the map after
        // the scan applied as the scan's kernel stores each element (one launch, not two).
        conditional(
            "scan-map-after".into(),
            "(map ?h (scanglb ?f ?z ?x))",
            "(mapscan ?h (scanglb ?f ?z ?x))".into(),
            |eg: &mut EG, _: Id, s: &Subst| leaf_fn(eg, s[var("?h")]),
        ),
    ]
}
