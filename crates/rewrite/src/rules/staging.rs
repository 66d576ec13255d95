//! Staging rules: copies into local memory of what a work-group reads more than once, namely the rows
//! each work-item reads whole (`stage-rows`, `stage-rows-vec`), the tiles of a 2-D work-group
//! block (`stage-local`) and an array every work-item reads whole (`reuse-tiles-*`).

use super::{conditional, transposed_of, var};
use crate::egraph::{Data, Lift, LiftAnalysis, EG, FLOAT_ROWS, SCALAR_ROWS, TILE, ZIP2};
use crate::sizes::{estimate, may_split, STAGED_ROW_BYTES, STAGE_BYTES};
use arith::ArithExpr;
use egg::{Id, Rewrite, Subst};

/// `stage-rows`, with `default` the length taken for an unknown size.
pub fn stage_rows_rule(default: i64) -> Rewrite<Lift, LiftAnalysis> {
    // map (mapf f) (split t X) = map (mapf f) (stage (split t X)), X rows of 8 to 64
    // elements (one per work-item) whose block of t fits local memory, X not a transpose
    conditional(
        "stage-rows".into(),
        "(map (mapf ?f) (split ?t ?x))",
        "(map (mapf ?f) (stage (split ?t ?x)))".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let t = eg[s[var("?t")]].data.lit.map(|t| t as i64);
            let rows = staged_rows(eg, s[var("?x")]);
            let sizes = &eg.analysis.sizes;
            let len = rows.and_then(|r| estimate(&r, sizes, default));
            matches!((t, len), (Some(t), Some(l)) if l >= 8 && l * 4 <= STAGED_ROW_BYTES && t * l * 4 <= 2 * STAGE_BYTES)
        },
    )
}

/// `stage-local`, with `default` the length taken for an unknown size.
pub fn stage_local_rule(default: i64) -> Rewrite<Lift, LiftAnalysis> {
    // map f R = map f (local R), R a work-group tile of float rows whose copy fits
    conditional(
        "stage-local".into(),
        "(map ?f ?x)",
        "(map ?f (local ?x))".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let x = &eg[s[var("?x")]].data;
            let sizes = &eg.analysis.sizes;
            let elems = |e: &Option<ArithExpr>| e.as_ref().map(|e| estimate(e, sizes, default).unwrap_or(default));
            float_tile(x) && matches!((elems(&x.len), elems(&x.inner)), (Some(a), Some(b)) if a * b * 4 <= STAGE_BYTES)
        },
    )
}

/// The length of the rows that `stage-rows` copies when `x` is mapped one row per work-item:
/// `x` itself, a variable holding rows of scalars, or the second array of `zip a x'` (a
/// neighbour list beside its particle); neither a transpose (whose rows neighbouring
/// work-items already read at neighbouring addresses) nor a work-group tile (`stage-local`
/// stages those).
fn staged_rows(eg: &EG, x: Id) -> Option<ArithExpr> {
    // a variable (an input, or a value an earlier kernel computed), not a view such as the
    // windows of `slide`, whose elements may be whole rows of a matrix
    let rows = |id: Id| -> Option<ArithExpr> {
        let d = &eg[id].data;
        let variable = eg[id].nodes.iter().any(|n| matches!(n, Lift::Sym(_)));
        if !variable || d.flags & SCALAR_ROWS == 0 || transposed_of(eg, id).is_some() || d.flags & TILE != 0 {
            return None;
        }
        d.inner.clone()
    };
    if eg[x].data.flags & ZIP2 == 0 {
        return rows(x);
    }
    eg[x].nodes.iter().find_map(|n| match n {
        Lift::Other(s, kids) if kids.len() == 2 && s.as_str().split('|').next() == Some("zip") => {
            eg[kids[0]].data.inner.is_none().then(|| rows(kids[1])).flatten()
        }
        _ => None,
    })
}

/// A work-group tile whose rows are floats: what staging and K-tiling copy element by element.
pub(super) fn float_tile(d: &Data) -> bool {
    d.flags & TILE != 0 && d.flags & FLOAT_ROWS != 0
}

/// map (mapf f) (split t X) = map (mapf f) (stagev (split t X)), X rows of floats as in
/// `stage-rows`, 4 | t (so each block of t rows of L floats is whole float4s, starting at a
/// multiple of 16 bytes): the block is copied as float4 without the padding of `stage`'s rows,
/// whose index for a run-time row length divides each copied element's position by it; rows
/// of an even length then share banks when read (2 work-items a bank for L = 34). Measured on
/// an H200: k-means' rows staged so ran in 0.0902 ms, padded by `stage` in 0.1068.
pub(super) fn stage_rows_vec(default: i64) -> Rewrite<Lift, LiftAnalysis> {
    conditional(
        "stage-rows-vec".into(),
        "(map (mapf ?f) (split ?t ?x))",
        "(map (mapf ?f) (stagev (split ?t ?x)))".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let t = eg[s[var("?t")]].data.lit.map(|t| t as i64);
            let rows = staged_float_rows(eg, s[var("?x")]);
            let sizes = &eg.analysis.sizes;
            let len = rows.and_then(|r| estimate(&r, sizes, default));
            matches!((t, len), (Some(t), Some(l)) if t % 4 == 0 && l >= 8 && l * 4 <= STAGED_ROW_BYTES && t * l * 4 <= 2 * STAGE_BYTES)
        },
    )
}

/// `staged_rows` where the rows are of `float` scalars (`asVector` reads them as float4).
fn staged_float_rows(eg: &EG, x: Id) -> Option<ArithExpr> {
    let len = staged_rows(eg, x)?;
    let rows = if eg[x].data.flags & ZIP2 == 0 {
        x
    } else {
        eg[x].nodes.iter().find_map(|n| match n {
            Lift::Other(s, kids)
                if kids.len() == 2
                    && s.as_str().split('|').next() == Some("zip")
                    && eg[kids[0]].data.inner.is_none() =>
            {
                Some(kids[1])
            }
            _ => None,
        })?
    };
    (eg[rows].data.flags & FLOAT_ROWS != 0).then_some(len)
}

/// Whether the class holds a `tiles` node (an array already read in tiles).
fn tiled_reads(eg: &EG, id: Id) -> bool {
    eg[id].nodes.iter().any(|n| matches!(n, Lift::Tiles(_)))
}

/// Local-memory reuse of an array that every work-item reads whole (Lift's
/// `introduceReuseFromMap`, the classic GPU n-body): one rule per tile length `T` of
/// `Options::reuse_tiles`. Lowering gives `tiles` its meaning only where the reduction is
/// a row function's of a `mapWrg` over chunks (`Lowerer::host_reuse`): the group walks `w`
/// tile by tile, each work-item copying its share of the tile into local memory, and every
/// work-item folds the tile from there. The fold visits the elements in the same order, so no
/// algebraic property of `f` is needed. Measured on an H200 (`bench/results/runs/
/// nvidia-h200-2026-11-24-local-reuse.md`): n-body at N = 131072 17.1 ms against 18.8 read from
/// global memory, mri-q 1.18 ms against 1.48; with the tile read as `float4`s
/// (`memory::vector_locals`, `bench/results/runs/nvidia-h200-2026-11-24-nbody.md`) n-body 13.4 ms.
pub fn reuse_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    let blocks = std::iter::once(1).chain(opts.reuse_blocks.iter().copied().filter(|&b| b > 1));
    for (t, b) in opts
        .reuse_tiles
        .iter()
        .flat_map(|&t| blocks.clone().map(move |b| (t, b)))
    {
        // reduce f z (map g w) = reduce f z (map g (tiles T B w)), w an array of scalars or
        // vectors of the program's parameters only (the same for every work-item), not read in
        // tiles already, T | len(w); g reads something else (the work-item's own element).
        // `B` only says how lowering maps rows to work-items (`B` rows each, every element
        // read from local memory once for all of them: Lift's `apply1DRegisterBlocking`)
        let name = match b {
            1 => format!("reuse-tiles-{t}"),
            _ => format!("reuse-tiles-{t}-b{b}"),
        };
        rules.push(conditional(
            name,
            "(reduce ?f ?z (map ?g ?w))",
            format!("(reduce ?f ?z (map ?g (tiles {t} {b} ?w)))"),
            move |eg: &mut EG, _: Id, s: &Subst| {
                let (g, w) = (s[var("?g")], s[var("?w")]);
                let params = &eg.analysis.params;
                let wd = &eg[w].data;
                let whole = !wd.free.is_empty() && wd.free.iter().all(|v| params.contains(v));
                let per_item = eg[g].data.free.iter().any(|v| !params.contains(v));
                whole
                    && per_item
                    && wd.inner.is_none()
                    && !tiled_reads(eg, w)
                    && wd
                        .len
                        .as_ref()
                        .is_some_and(|n| may_split(n, t, &eg.analysis.sizes, &eg.analysis.declared))
            },
        ));
    }
    rules
}

/// The `(tile length, rows a work-item)` pairs of `reuse_rules`' rules that `only_rules` keeps
/// (`reuse-tiles-{t}` has one row, `reuse-tiles-{t}-b{b}` has `b`): the tilings that
/// `extract::with_tile_siblings` gives every extracted tiled term.
pub fn reuse_tilings(opts: &crate::Options) -> Vec<(i64, i64)> {
    let blocks: Vec<i64> = std::iter::once(1)
        .chain(opts.reuse_blocks.iter().copied().filter(|&b| b > 1))
        .collect();
    opts.reuse_tiles
        .iter()
        .flat_map(|&t| blocks.iter().map(move |&b| (t, b)))
        .filter(|&(t, b)| {
            let name = match b {
                1 => format!("reuse-tiles-{t}"),
                _ => format!("reuse-tiles-{t}-b{b}"),
            };
            opts.only_rules.is_empty() || opts.only_rules.iter().any(|o| name.contains(o.as_str()))
        })
        .collect()
}
