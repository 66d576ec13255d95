//! Stencil rules: overlapped tiling of a map over the windows of `slide` in one, two and three
//! dimensions (Lift's `slideTiling`, `tile2DStencils`; Hagedorn et al., CGO 2018), each
//! work-group computing a tile of outputs from its input tile and halo, staged in local memory
//! by the group's consecutive work-items or read where it lies.
//!
//! The windows the rules recognise are the ones users write (LANGUAGE.md's `slide2d`):
//! - 1-D: `slide n s x`;
//! - 2-D: `map (λp. transpose p) (slide n s (map (λr. slide n' s' r) x))`;
//! - 3-D: `map (λw. map (λp. transpose p) (transpose w)) (slide n s (map (λq. slide2d q) x))`.
//!
//! The result is one `(stencil c f x)` node (`StencilTile::pack` in `c`), whose lowering
//! (`lower::stencil`) builds the tiled form of the equations below.
//!
//! These rules run on a copy of the saturated e-graph (`stencil_terms`), and only the terms
//! with a tile are taken from it: extraction keeps a few smallest terms a class, and the small
//! `stencil` nodes would otherwise push the other mappings of the same map out of them (a
//! 1-D stencil's `mapWrg × mapLcl` variant, chosen before, was no longer extracted).

use super::{pat, symbol_of, transposed_of, var};
use crate::egraph::{Lift, LiftAnalysis, EG};
use crate::extract::{self, TOp, Term};
use crate::sizes::may_split;
use crate::stencil_sizes::{slide_params, StencilTile};
use egg::{Applier, Id, PatternAst, Rewrite, Subst, Symbol};

/// Tiles of 1-D stencils: outputs per work-group.
pub const TILES_1D: [i64; 3] = [64, 128, 256];
/// Tiles of 2-D stencils, rows × columns of outputs: rows of 32 or more outputs, so that a
/// warp's loads of a tile row are one or two 128-byte lines.
pub const TILES_2D: [[i64; 2]; 4] = [[4, 32], [8, 32], [2, 128], [4, 64]];
/// Tiles of 3-D stencils, planes × rows × columns of outputs.
pub const TILES_3D: [[i64; 3]; 3] = [[1, 8, 32], [2, 4, 32], [1, 4, 64]];
/// Outputs a work-item computes down a column from a strip in private memory (`stencil-column-*`),
/// per dimensions (none in 1-D: a row of windows is read along consecutive addresses already).
pub const COLUMNS_2D: [i64; 2] = [4, 8];
pub const COLUMNS_3D: [i64; 2] = [2, 4];
/// Elements of the strip a work-item of `stencil-column-*` holds in private memory at most.
pub const MAX_COLUMN_STRIP: usize = 64;
/// Bytes of local memory one staged input tile may take.
pub const STENCIL_STAGE_BYTES: i64 = 24 * 1024;

/// The terms of the tiled stencils of the saturated `eg` (see the module docs), the rules'
/// phase noted in `stats` when any applied.
pub fn stencil_terms(eg: &EG, root: Id, opts: &crate::Options, stats: &mut crate::Stats) -> Vec<std::rc::Rc<Term>> {
    let rules: Vec<_> = stencil_rules(opts)
        .into_iter()
        .filter(|r| opts.only_rules.is_empty() || opts.only_rules.iter().any(|o| r.name.as_str().contains(o.as_str())))
        .collect();
    let before = eg.total_number_of_nodes();
    let runner = egg::Runner::default()
        .with_egraph(eg.clone())
        .with_iter_limit(opts.iter_limit)
        .with_node_limit(opts.node_limit)
        .with_time_limit(opts.time_limit)
        .with_scheduler(egg::SimpleScheduler)
        .run(&rules);
    let tiled = runner.egraph;
    if tiled.total_number_of_nodes() == before {
        return vec![];
    }
    stats.iterations += runner.iterations.len();
    stats
        .stop_reason
        .push_str(&format!(", stencils: {}", crate::stop_text(&runner.stop_reason)));
    let root = tiled.find(root);
    extract::top_terms(&tiled, root, opts.per_class, opts.per_class * 24, 30)
        .into_iter()
        .filter(|t| has_stencil(t))
        .collect()
}

fn has_stencil(t: &Term) -> bool {
    matches!(t.op, TOp::Stencil(_)) || t.kids.iter().any(|k| has_stencil(k))
}

/// The stencil tilings, every tile of `TILES_*` that fits `Options::max_group`, staged and not.
pub fn stencil_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    let sets: [(usize, Vec<[i64; 3]>); 3] = [
        (1, TILES_1D.iter().map(|&u| [u, 0, 0]).collect()),
        (2, TILES_2D.iter().map(|&[a, b]| [a, b, 0]).collect()),
        (3, TILES_3D.to_vec()),
    ];
    for (dims, tiles) in sets {
        // the maps over the windows, outermost first; the innermost may join the one-element
        // arrays of a reduction over each window (not in one dimension: the map itself is
        // the stencil there, its join outside it)
        let lhs = |joined: bool| {
            let row = if joined { "(join (map ?f ?r))" } else { "(map ?f ?r)" };
            match dims {
                1 => "(map ?f ?x)".to_string(),
                2 => format!("(map (lam ?r {row}) ?x)"),
                _ => format!("(map (lam ?q (map (lam ?r {row}) ?q)) ?x)"),
            }
        };
        for u in tiles {
            if u[..dims].iter().product::<i64>() > opts.max_group {
                continue;
            }
            for joined in if dims == 1 { vec![false] } else { vec![false, true] } {
                for staged in [true, false] {
                    let name = format!(
                        "stencil-tile-{dims}d-{}{}{}",
                        u[..dims].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x"),
                        if joined { "-joined" } else { "" },
                        if staged { "" } else { "-global" }
                    );
                    let applier = TileStencil {
                        dims,
                        u,
                        staged,
                        joined,
                        column: 1,
                    };
                    rules.push(Rewrite::new(name, pat(&lhs(joined)), applier).expect("rule"));
                }
            }
        }
        let columns: &[i64] = match dims {
            1 => &[],
            2 => &COLUMNS_2D,
            _ => &COLUMNS_3D,
        };
        for &v in columns {
            for joined in [false, true] {
                let name = format!("stencil-column-{dims}d-{v}{}", if joined { "-joined" } else { "" });
                let applier = TileStencil {
                    dims,
                    u: [v, 1, 1],
                    staged: false,
                    joined,
                    column: v,
                };
                rules.push(Rewrite::new(name, pat(&lhs(joined)), applier).expect("rule"));
            }
        }
    }
    rules
}

/// Overlapped tiling. In one dimension, for `u` outputs per tile:
///
/// `map f (slide n s x) = join (map (λt. map f (slide n s t)) (slide ((u-1)·s+n) (u·s) x))`
///
/// (for `s = 1`, Lift's `slideTiling`: tiles of `u+n-s` elements, `u` apart, overlapping by
/// the halo `n-s`). In two dimensions, with `slide2d` of steps `(u1·s1, u0·s0)` and sizes
/// `((u1-1)·s1+n1, (u0-1)·s0+n0)` cutting `x` into tiles:
///
/// `map (λr. map f r) (slide2d (n1,s1) (n0,s0) x) =
///  join (map (λT. map join (transpose (map (λt. map (λr. map f r) (slide2d (n1,s1) (n0,s0) t)) T)))
///        (tiles x))`
///
/// and likewise in three (`tile2DStencils`, one more level), and with `λr. join (map f r)`
/// for `λr. map f r` where `f` returns a one-element array (a reduction over its window). Side conditions: `u_d` divides
/// the number of windows along dimension `d` (the tiles then cover the windows exactly), the
/// windows and steps are constants, `x` is computed at host level (it mentions no bound
/// variable), `f` computes something (it is not a re-indexing such as `slide2d`'s own
/// `transpose`), a tile's outputs fit a work-group and its input tile
/// `STENCIL_STAGE_BYTES` of local memory. The rewritten map is the node `(stencil c f x)`,
/// `c` the packed `StencilTile`, `x` the array below the slides.
///
/// A sliding window in registers (`stencil-column-{v}`, Lift's `mapSeqSlide` where the window
/// is loaded once for `v` steps instead of one row a step): the windows along the outermost
/// dimension in groups of `v`,
///
/// `map (λr. map f r) (slide2d (n1,s1) (n0,s0) x) =
///  join (map (λS. transpose (map (λs. map f (join (slide2d (n1,s1) (n0,s0) s))) S)) (strips x))`,
///
/// `strips x = map transpose (slide ((v-1)·s1+n1) (v·s1) (map (λr. slide n0 s0 r) x))`, each
/// strip of `((v-1)·s1+n1) × n0` elements copied into private memory by its work-item and its
/// `v` outputs computed from there: `(v-1)·s1+n1` rows read per `v` outputs instead of `n1`
/// each. Side conditions as above, with `v | ` the windows along the outermost dimension and
/// a strip of at most `MAX_COLUMN_STRIP` elements.
struct TileStencil {
    dims: usize,
    u: [i64; 3],
    staged: bool,
    joined: bool,
    column: i64,
}

impl Applier<Lift, LiftAnalysis> for TileStencil {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, x) = (s[var("?f")], s[var("?x")]);
        if self.dims >= 2 {
            // the maps' parameters are their rows: `map (λr. map f r) ...`
            let r = s[var("?r")];
            if symbol_of(eg, r).is_none() {
                return vec![];
            }
        }
        if !computes(eg, f) {
            return vec![];
        }
        let Some((windows, below)) = windows_of(eg, x, self.dims) else {
            return vec![];
        };
        let mut t = StencilTile {
            dims: self.dims,
            n: [0; 3],
            s: [0; 3],
            u: self.u,
            staged: self.staged,
            joined: self.joined,
            column: self.column,
        };
        for (d, (n, st)) in windows.into_iter().enumerate() {
            t.n[d] = n;
            t.s[d] = st;
        }
        // the number of windows along each dimension, outermost first
        let xd = &eg[x].data;
        let mut lens = vec![xd.len.clone()];
        if self.dims >= 2 {
            lens.push(xd.inner.clone());
        }
        if self.dims == 3 {
            lens.push(third_len(eg, x));
        }
        let analysis = &eg.analysis;
        let fits = lens.iter().enumerate().all(|(d, l)| {
            l.as_ref()
                .is_some_and(|l| may_split(l, t.u[d], &analysis.sizes, &analysis.declared))
        });
        let host_level = eg[below].data.free.iter().all(|v| analysis.params.contains(v));
        let private = (t.extent(0) * t.n[1..self.dims].iter().product::<i64>()) as usize;
        if !fits
            || !host_level
            || (self.staged && t.tile_elems() * 4 > STENCIL_STAGE_BYTES)
            || (self.column > 1 && private > MAX_COLUMN_STRIP)
        {
            return vec![];
        }
        let c = eg.add(Lift::Num(t.pack()));
        let res = eg.add(Lift::Stencil([c, f, below]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// Whether the function `f` computes: an opaque function, a reduction, or a lambda whose body
/// is no re-indexing of its parameter (`slide2d`'s `λp. transpose p` is not a stencil's `f`).
fn computes(eg: &EG, f: Id) -> bool {
    eg[f].nodes.iter().any(|n| match n {
        Lift::Sym(s) => s.as_str().starts_with('@'),
        Lift::ReduceF(_) | Lift::ReduceFU(_) => true,
        Lift::Lam([_, b]) => !eg[*b].nodes.iter().any(|n| match n {
            Lift::Transpose(_) | Lift::Sym(_) | Lift::Join(_) | Lift::Split(_) => true,
            Lift::Other(h, _) => matches!(
                h.as_str().split(['|', ' ']).next().unwrap_or(""),
                "transpose" | "slide" | "pad" | "pad-clamp" | "zip" | "reverse" | "reorder-stride"
            ),
            _ => false,
        }),
        _ => false,
    })
}

/// `(n, s)` of the `slide` in class `id` over one argument, and that argument.
fn slide_in(eg: &EG, id: Id) -> Option<((i64, i64), Id)> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Other(h, kids) if kids.len() == 1 => slide_params(h.as_str()).map(|p| (p, kids[0])),
        _ => None,
    })
}

/// Whether the function class `id` is `λp. transpose p`.
fn transposes(eg: &EG, id: Id) -> bool {
    eg[id].nodes.iter().any(|n| match n {
        Lift::Lam([p, b]) => transposed_of(eg, *b).is_some_and(|m| eg.find(m) == eg.find(*p)),
        _ => false,
    })
}

/// `map (λq. body q) x` in class `id`, body's class and the parameter, and `x`.
fn maps_of(eg: &EG, id: Id) -> Vec<(Id, Id, Id)> {
    eg[id]
        .nodes
        .iter()
        .filter_map(|n| match n {
            Lift::Map([f, x]) => eg[*f].nodes.iter().find_map(|g| match g {
                Lift::Lam([q, b]) => Some((*q, *b, *x)),
                _ => None,
            }),
            _ => None,
        })
        .collect()
}

/// The windows `(n, s)` per dimension (outermost first) of the `dims`-dimensional `slide`
/// in class `id`, and the array below them.
fn windows_of(eg: &EG, id: Id, dims: usize) -> Option<(Vec<(i64, i64)>, Id)> {
    match dims {
        1 => slide_in(eg, id).map(|(p, x)| (vec![p], x)),
        2 => {
            // map (λp. transpose p) (slide n s (map (λr. slide n' s' r) x))
            for n in &eg[id].nodes {
                let Lift::Map([tf, sl]) = n else { continue };
                if !transposes(eg, *tf) {
                    continue;
                }
                let Some((outer, rows)) = slide_in(eg, *sl) else {
                    continue;
                };
                for (q, body, x) in maps_of(eg, rows) {
                    if let Some((inner, arg)) = slide_in(eg, body) {
                        if eg.find(arg) == eg.find(q) {
                            return Some((vec![outer, inner], x));
                        }
                    }
                }
            }
            None
        }
        _ => {
            // map (λw. map (λp. transpose p) (transpose w)) (slide n s (map (λq. slide2d q) x))
            for n in &eg[id].nodes {
                let Lift::Map([wf, sl]) = n else { continue };
                let reorders = eg[*wf].nodes.iter().any(|g| match g {
                    Lift::Lam([w, b]) => eg[*b].nodes.iter().any(|m| match m {
                        Lift::Map([tf, tw]) => {
                            transposes(eg, *tf) && transposed_of(eg, *tw).is_some_and(|v| eg.find(v) == eg.find(*w))
                        }
                        _ => false,
                    }),
                    _ => false,
                });
                if !reorders {
                    continue;
                }
                let Some((outer, planes)) = slide_in(eg, *sl) else {
                    continue;
                };
                for (q, body, x) in maps_of(eg, planes) {
                    if let Some((inner, arg)) = windows_of(eg, body, 2) {
                        if eg.find(arg) == eg.find(q) {
                            return Some((vec![outer, inner[0], inner[1]], x));
                        }
                    }
                }
            }
            None
        }
    }
}

/// The number of windows along the innermost of three dimensions: the length of the rows of
/// the planes of windows (`len`, `inner` of the class give only the outer two).
fn third_len(eg: &EG, id: Id) -> Option<arith::ArithExpr> {
    // map (λw. map transpose (transpose w)) (slide ..(map slide2d x)): the windows of a plane
    // of `x` have the rows' count as their inner length
    for n in &eg[id].nodes {
        let Lift::Map([_, sl]) = n else { continue };
        let (_, planes) = slide_in(eg, *sl)?;
        for (_, body, _) in maps_of(eg, planes) {
            if let Some(l) = eg[body].data.inner.clone() {
                return Some(l);
            }
        }
    }
    None
}
