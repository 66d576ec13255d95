//! Tiling rules: split-join (a map over chunks), 2-D work-group tiles of a map over a map
//! (`tile-2d-*`), the tiled transpose (`transpose-tile-*`) and the K-tiling of a block of dot
//! products (`ktile-*`). Register blocking is in `regblock.rs`.

use super::staging::float_tile;
use super::{cond_split, conditional, pat, symbol_of, transposed_of, var};
use crate::egraph::{Data, LeafInfo, Lift, LiftAnalysis, DOT_FN, EG, FLOAT_ROWS, TILE};
use crate::sizes::{may_split, ttile_rows};
use arith::ArithExpr;
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// `tile-2d-{t1}x{t0}` and `tile-2d-{t1}x{t0}-joined` for each pair of `Options::tile_factors`.
pub fn tile_2d_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &t1 in &opts.tile_factors {
        for &t0 in &opts.tile_factors {
            for joined in [true, false] {
                // see `Tile2d` for the equation and its side conditions
                let lhs = if joined {
                    "(map (lam ?r (join (map ?g ?ys))) ?xs)"
                } else {
                    "(map (lam ?r (map ?g ?ys)) ?xs)"
                };
                let name = format!("tile-2d-{t1}x{t0}{}", if joined { "-joined" } else { "" });
                rules.push(
                    Rewrite::new(
                        name,
                        pat(lhs),
                        Tile2d {
                            t1,
                            t0,
                            joined,
                            max_group: opts.max_group,
                        },
                    )
                    .expect("rule"),
                );
            }
        }
    }
    rules
}

/// `transpose-tile-{t}` for each of `Options::transpose_tiles`.
pub fn transpose_tile_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.transpose_tiles
        .iter()
        .map(|&t| {
            // map (λr. map f r) (transpose m) = ttile t f m; see `TransposeTile`
            Rewrite::new(
                format!("transpose-tile-{t}"),
                pat("(map (lam ?r (map ?f ?r)) ?x)"),
                TransposeTile {
                    t,
                    max_group: opts.max_group,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// `ktile-{kt}` for each of `Options::ktile_factors`.
pub fn ktile_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.ktile_factors
        .iter()
        .map(|&kt| {
            // A block of dot products of two tiles = the same block accumulated over tiles of
            // length kt, each staged in local memory (map-reduce interchange: the reduction over K
            // moves outside the maps, its accumulator is the block), kt | K.
            conditional(
                format!("ktile-{kt}"),
                "(map (lam ?r (join (map ?g ?c))) ?x)",
                format!("(ktile {kt} (map (lam ?r (join (map ?g (local ?c)))) (local ?x)))"),
                move |eg: &mut EG, _: Id, s: &Subst| {
                    let (g, x, c) = (&eg[s[var("?g")]].data, &eg[s[var("?x")]].data, &eg[s[var("?c")]].data);
                    g.flags & DOT_FN != 0
                        && float_tile(x)
                        && float_tile(c)
                        && x.inner
                            .as_ref()
                            .is_some_and(|k| may_split(k, kt, &eg.analysis.sizes, &eg.analysis.declared))
                },
            )
        })
        .collect()
}

/// Work-group tiling of a map over a map (each work-group computes a `t1 × t0` block of the
/// result): `map (λr. join? (map g ys)) xs` =
/// `join (map (λR. map (λz. join z) (transpose (map (λC. map (λr. join? (map g C)) R)
/// (split t0 ys)))) (split t1 xs))`, when `ys` does not mention `r`, `t1 | len xs`,
/// `t0 | len ys` and a block fits a work-group. `R` and `C` are the tiles that
/// `stage-local` may copy into local memory.
struct Tile2d {
    t1: i64,
    t0: i64,
    joined: bool,
    max_group: i64,
}

impl Applier<Lift, LiftAnalysis> for Tile2d {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (r, g, ys, xs) = (s[var("?r")], s[var("?g")], s[var("?ys")], s[var("?xs")]);
        let Some(rs) = symbol_of(eg, r) else { return vec![] };
        let (xd, yd) = (eg[xs].data.clone(), eg[ys].data.clone());
        let fits = |d: &Data, k: i64| {
            d.len
                .as_ref()
                .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
        };
        if yd.free.contains(&rs) || !fits(&xd, self.t1) || !fits(&yd, self.t0) || self.t1 * self.t0 > self.max_group {
            return vec![];
        }
        let tag = format!("{}_{}x{}", usize::from(eclass), self.t1, self.t0);
        let tile_var = |eg: &mut EG, base: &str, len: i64, of: &Data| {
            let sym = Symbol::from(format!("{base}{tag}"));
            let data = Data {
                len: Some(ArithExpr::cst(len)),
                inner: of.inner.clone(),
                flags: TILE | (of.flags & FLOAT_ROWS),
                free: vec![sym],
                ..Data::default()
            };
            eg.analysis.leaves.insert(sym, LeafInfo { data });
            eg.add(Lift::Sym(sym))
        };
        let big_r = tile_var(eg, "tile_r", self.t1, &xd);
        let big_c = tile_var(eg, "tile_c", self.t0, &yd);
        let z_sym = Symbol::from(format!("tile_z{tag}"));
        eg.analysis.leaves.insert(
            z_sym,
            LeafInfo {
                data: Data {
                    free: vec![z_sym],
                    ..Data::default()
                },
            },
        );
        let z = eg.add(Lift::Sym(z_sym));
        let row_map = eg.add(Lift::Map([g, big_c]));
        let row_body = if self.joined {
            eg.add(Lift::Join(row_map))
        } else {
            row_map
        };
        let row_fn = eg.add(Lift::Lam([r, row_body]));
        let block = eg.add(Lift::Map([row_fn, big_r]));
        let block_fn = eg.add(Lift::Lam([big_c, block]));
        let t0 = eg.add(Lift::Num(self.t0));
        let ysplit = eg.add(Lift::Split([t0, ys]));
        let blocks = eg.add(Lift::Map([block_fn, ysplit]));
        let tr = eg.add(Lift::Transpose(blocks));
        let zj = eg.add(Lift::Join(z));
        let join_fn = eg.add(Lift::Lam([z, zj]));
        let rows = eg.add(Lift::Map([join_fn, tr]));
        let outer_fn = eg.add(Lift::Lam([big_r, rows]));
        let t1 = eg.add(Lift::Num(self.t1));
        let xsplit = eg.add(Lift::Split([t1, xs]));
        let tiles = eg.add(Lift::Map([outer_fn, xsplit]));
        let res = eg.add(Lift::Join(tiles));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// Tiled transpose: `map (λr. map f r) (transpose m)`, `f` an
/// opaque element function and `m` a matrix of floats whose both lengths `t` divides, =
/// `ttile t f m`. Without it, every mapping of the program reads or writes global memory with
/// a stride of a row; the tile's copy into local memory reads rows of `m` and its transposed
/// write writes rows of the result, both with consecutive work-items at consecutive addresses.
struct TransposeTile {
    t: i64,
    /// `t × ttile_rows(t)` work-items must fit a work-group (an H200 refused 32×32, one
    /// work-item per element, although its limit is 1024).
    max_group: i64,
}

impl Applier<Lift, LiftAnalysis> for TransposeTile {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, x) = (s[var("?f")], s[var("?x")]);
        let Some(m) = transposed_of(eg, x) else { return vec![] };
        let opaque = symbol_of(eg, f).is_some_and(|f| f.as_str().starts_with('@'));
        let md = &eg[m].data;
        let fits = |e: &Option<ArithExpr>| {
            e.as_ref()
                .is_some_and(|n| may_split(n, self.t, &eg.analysis.sizes, &eg.analysis.declared))
        };
        if !opaque
            || md.flags & FLOAT_ROWS == 0
            || !fits(&md.len)
            || !fits(&md.inner)
            || self.t % ttile_rows(self.t) != 0
            || self.t * ttile_rows(self.t) > self.max_group
        {
            return vec![];
        }
        let t = eg.add(Lift::Num(self.t));
        let res = eg.add(Lift::TTile([t, f, m]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// Split-join: a map as a map over chunks, and the identities that move maps into chunks.
pub fn tiling_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules: Vec<Rewrite<Lift, LiftAnalysis>> = vec![
        // join (split k xs) = xs
        egg::rewrite!("join-split"; "(join (split ?k ?x))" => "?x"),
        // split k (map f xs) = map (mapf f) (split k xs)
        egg::rewrite!("split-map"; "(split ?k (map ?f ?x))" => "(map (mapf ?f) (split ?k ?x))"),
        // map f (map g xs) = map (f ∘ g) xs  (fuses the chunk maps that split-map creates)
        egg::rewrite!("map-fusion"; "(map ?f (map ?g ?x))" => "(map (comp ?f ?g) ?x)"),
    ];
    for &k in &opts.split_factors {
        // map f xs = join (map (mapf f) (split k xs)), k | len(xs); f not itself tiled
        rules.push(conditional(
            format!("split-join-{k}"),
            "(map ?f ?x)",
            format!("(join (map (mapf ?f) (split {k} ?x)))"),
            cond_split(k),
        ));
    }
    rules
}
