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
//! (`lower::stencil`) builds the tiled form of the equations below. Windows zipped with
//! further grids (`map f (zip2d (slide2d … x) g)`) give `(stencil c f (zip x g))`.
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
/// Columns of 16 only for windows of `LONG_COLUMN_MIN_ROWS` rows or more.
pub const COLUMNS_2D: [i64; 3] = [4, 8, 16];
pub const COLUMNS_3D: [i64; 2] = [2, 4];
/// Blocks of 3-D stencils' outputs a work-item computes from its strip in private memory
/// (`stencil-column-3d-{v}x{w}`): `v` planes down its column times `w` rows of the plane, the
/// rows' neighbours shared within the strip. A 3×3×3 column of 4 reads 6·3·3 elements per 4
/// outputs (13.5 each, through the L1 cache where the neighbouring work-items' strips
/// overlap), a block of 4×2 reads 6·4·3 per 8 (9), of 4×4 6·6·3 per 16 (6.75). heat3d's block
/// of 4×4 took 1.09× a copy on the H200 against 1.32× for its column of 4
/// (`bench/results/stencil-fast-nvidia-h200-2026-12-02.md`); the 27-point Jacobi's column of 4,
/// twice heat3d's loads per output for the same bytes, took 1.89×
/// (`bench/results/merged-nvidia-h200-2026-12-02.md`).
pub const COLUMN_BLOCKS_3D: [[i64; 2]; 3] = [[4, 2], [4, 4], [8, 2]];
/// A column of 16 saves a wide window's halo rows (the 5×5 Gaussian: 1.43× → 1.36× a copy on
/// the H200 against a column of 8) but not a 3-row window's (grad2d 1.13× → 1.16×; heat3d's
/// 3×3×3 column of 8 took 1.33× against 1.28× for 4; `bench/results/stencil-more-nvidia-h200-2026-12-02.md`).
pub const LONG_COLUMN_MIN_ROWS: i64 = 5;
/// Elements of the strip a work-item of `stencil-column-*` holds in private memory at most:
/// the 3-D 13-point star's 6×5×5 strip of two outputs (150; the elements off the star are
/// never read and the OpenCL compiler drops their loads), every 3×3 and 3×3×3 strip, the
/// 5×5 Gaussian's of eight outputs.
pub const MAX_COLUMN_STRIP: usize = 160;
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
        if dims == 3 {
            for [v, w] in COLUMN_BLOCKS_3D {
                for joined in [false, true] {
                    let name = format!("stencil-column-3d-{v}x{w}{}", if joined { "-joined" } else { "" });
                    let applier = TileStencil {
                        dims,
                        u: [v, w, 1],
                        staged: false,
                        joined,
                        column: v,
                    };
                    rules.push(Rewrite::new(name, pat(&lhs(joined)), applier).expect("rule"));
                }
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
/// a strip of at most `MAX_COLUMN_STRIP` elements; a column of 16 only for windows of
/// `LONG_COLUMN_MIN_ROWS` rows or more.
///
/// A block of a 3-D column (`stencil-column-3d-{v}x{w}`): strips `v·s0` planes and `w·s1`
/// rows apart, of `((v-1)·s0+n0) × ((w-1)·s1+n1) × n2` elements, each work-item's `v × w`
/// outputs computed from its strip (the rows' neighbours read once for `w` rows):
///
/// `map (λq. map (λr. map f r) q) (slide3d (n0,s0) (n1,s1) (n2,s2) x) =
///  join (map (λP. transpose (map join (transpose (map (λA. map transpose (transpose A))
///        (map (λR. map (λs. split w (map f (join (join (slide3d … s))))) R) P)))))
///        (blocks x))`,
///
/// `blocks x` the user's `slide3d` of windows `((v-1)·s0+n0, v·s0)`, `((w-1)·s1+n1, w·s1)`
/// and `(n2, s2)`. Side conditions as for the column, `w` dividing the windows along the
/// second dimension; a zipped grid's pieces are its `v × w` points of the block (`slide3d`
/// of windows `(v, v)`, `(w, w)`, `(1, 1)`).
///
/// A column of a stencil whose windows are zipped with grids of one point per window
/// (hotspot's `zip2d (slide2d … temp) power`; `Zipped`) carries the grids' points along:
///
/// `map (λr. map f r) (zip2d (slide2d (n1,s1) (n0,s0) x) g) =
///  join (map (λS. transpose (map (λ(s, c). map f (zip (join (slide2d (n1,s1) (n0,s0) s)) (join c))) S))
///        (zip2d (strips x) (pieces g)))`,
///
/// `pieces g = map transpose (slide v v (map (λr. slide 1 1 r) g))`, the `v` points of `g`
/// down the work-item's column (read where they lie: each is read once). Side conditions as
/// for the column, and `x` and `g` at host level. Staged and unstaged tiles of zipped windows
/// are not made: the columns beat both on every stencil timed.
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
        // the windows alone, or (columns only) zipped with further grids
        let (windows, below, zipped) = match windows_of(eg, x, self.dims) {
            Some((w, b)) => (w, b, None),
            None if self.column > 1 => match zipped_windows_of(eg, x, self.dims) {
                Some(z) => (z.windows.clone(), z.below, Some(z)),
                None => return vec![],
            },
            None => return vec![],
        };
        let mut t = StencilTile {
            dims: self.dims,
            n: [0; 3],
            s: [0; 3],
            u: self.u,
            staged: self.staged,
            joined: self.joined,
            column: self.column,
            zipped: zipped.as_ref().map_or(0, |z| z.at as i64 + 1),
        };
        for (d, (n, st)) in windows.into_iter().enumerate() {
            t.n[d] = n;
            t.s[d] = st;
        }
        // the number of windows along each dimension, outermost first (a zipped grid's
        // lengths: it has one point per window)
        let xd = &eg[zipped.as_ref().map_or(x, |z| z.grids[0])].data;
        let mut lens = vec![xd.len.clone()];
        if self.dims >= 2 {
            lens.push(xd.inner.clone());
        }
        if self.dims == 3 {
            lens.push(match &zipped {
                Some(z) => raw_third_len(eg, z.windows_arg),
                None => third_len(eg, x),
            });
        }
        let analysis = &eg.analysis;
        let fits = lens.iter().enumerate().all(|(d, l)| {
            l.as_ref()
                .is_some_and(|l| may_split(l, t.u[d], &analysis.sizes, &analysis.declared))
        });
        let host_level = std::iter::once(below)
            .chain(zipped.iter().flat_map(|z| z.grids.iter().copied()))
            .all(|a| eg[a].data.free.iter().all(|v| analysis.params.contains(v)));
        // a column's strip: `extent` along the dimensions its outputs run along, the window's
        // size along the others (`u` is one there)
        let private = (0..self.dims).map(|d| t.extent(d)).product::<i64>() as usize;
        if !fits
            || !host_level
            || (self.staged && t.tile_elems() * 4 > STENCIL_STAGE_BYTES)
            || (self.column > 1 && private > MAX_COLUMN_STRIP)
            || (self.column > 8 && t.n[0] < LONG_COLUMN_MIN_ROWS)
        {
            return vec![];
        }
        let c = eg.add(Lift::Num(t.pack()));
        // a zipped stencil's array: `zip below g…` (the zip's own head, its windows' array
        // first), which `lower::stencil` takes apart
        let arg = match zipped {
            Some(z) => eg.add(Lift::Other(z.head, std::iter::once(below).chain(z.grids).collect())),
            None => below,
        };
        let res = eg.add(Lift::Stencil([c, f, arg]));
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

/// The windows of a zipped stencil: `map (λe. zip k₀ … kₘ₋₁) (zip a₀ … aₘ₋₁)`, each `kᵢ` the
/// component `get #i e` and `a_at` the windows (`kₐₜ` then `transpose (get #at e)` over
/// `slide n s (map (λq. slide n' s' q) x)`, as normalisation fuses `slide2d`'s `map transpose`
/// into the zip's function, or `get #at e` over the user's `slide2d`); the other `aᵢ`, the
/// grids, give one point per window.
struct Zipped {
    windows: Vec<(i64, i64)>,
    below: Id,
    /// The other arrays of the zip, in order.
    grids: Vec<Id>,
    /// The windows' component, and the zip's array there.
    at: usize,
    windows_arg: Id,
    /// The outer zip's head.
    head: Symbol,
}

fn zip_of(eg: &EG, id: Id) -> Vec<(Symbol, Vec<Id>)> {
    eg[id]
        .nodes
        .iter()
        .filter_map(|n| match n {
            Lift::Other(h, kids) if h.as_str().split('|').next() == Some("zip") => Some((*h, kids.clone())),
            _ => None,
        })
        .collect()
}

/// `k` when the class `id` is the opaque leaf `get #k v`.
fn component_of(eg: &EG, id: Id, v: Symbol) -> Option<usize> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Sym(s) => eg.analysis.components.get(s).filter(|(_, w)| *w == v).map(|(k, _)| *k),
        _ => None,
    })
}

/// Whether each of `kids` is `get #i v` (false) or `transpose (get #i v)` (true), `i` its
/// position.
fn zip_components(eg: &EG, kids: &[Id], v: Symbol) -> Option<Vec<bool>> {
    kids.iter()
        .enumerate()
        .map(|(i, &k)| {
            if component_of(eg, k, v) == Some(i) {
                Some(false)
            } else {
                transposed_of(eg, k)
                    .filter(|&m| component_of(eg, m, v) == Some(i))
                    .map(|_| true)
            }
        })
        .collect()
}

/// The one transposed component of `kinds`.
fn transposed_at(kinds: &[bool]) -> Option<usize> {
    let mut ts = kinds.iter().enumerate().filter(|(_, &t)| t).map(|(i, _)| i);
    let at = ts.next()?;
    ts.next().is_none().then_some(at)
}

/// The windows `slide n s (map (λq. w q) x)` before `slide2d`'s (or `slide3d`'s) transposes,
/// `w` the row windows `slide n' s' q` in two dimensions, a `slide2d` in three.
fn raw_windows(eg: &EG, a: Id, dims: usize) -> Option<(Vec<(i64, i64)>, Id)> {
    let (outer, rows) = slide_in(eg, a)?;
    maps_of(eg, rows).into_iter().find_map(|(q, b, x)| {
        let (inner, arg) = match dims {
            2 => slide_in(eg, b).map(|(w, arg)| (vec![w], arg))?,
            _ => windows_of(eg, b, 2)?,
        };
        (eg.find(arg) == eg.find(q)).then(|| (std::iter::once(outer).chain(inner).collect(), x))
    })
}

/// The zipped windows in class `id` (see `Zipped`): in two dimensions `map (λe. zip …) (zip
/// …)`; in three `map (λe. map (λe'. zip …) (zip …)) (zip …)`, the windows' components
/// transposed at both levels (normalisation fuses `slide3d`'s reordering so). Side
/// conditions: each component of the zips in its own position, one of them the windows, at
/// most three.
fn zipped_windows_of(eg: &EG, id: Id, dims: usize) -> Option<Zipped> {
    let found = |head: Symbol, args: &[Id], at: usize, (windows, below): (Vec<(i64, i64)>, Id)| {
        let grids: Vec<Id> = args
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != at)
            .map(|(_, &a)| a)
            .collect();
        (!grids.is_empty()).then_some(Zipped {
            windows,
            below,
            grids,
            at,
            windows_arg: args[at],
            head,
        })
    };
    for (e, body, z) in maps_of(eg, id) {
        let Some(ev) = symbol_of(eg, e) else { continue };
        for (head, args) in zip_of(eg, z) {
            if args.len() > 3 {
                continue;
            }
            if dims == 2 {
                for (_, kids) in zip_of(eg, body) {
                    let Some(kinds) = zip_components(eg, &kids, ev).filter(|k| k.len() == args.len()) else {
                        continue;
                    };
                    let hit = match transposed_at(&kinds) {
                        Some(at) => raw_windows(eg, args[at], 2).map(|w| (at, w)),
                        // the user's `slide2d` unfused: `get #at e` over its windows
                        None if kinds.iter().all(|t| !t) => args
                            .iter()
                            .enumerate()
                            .find_map(|(i, &a)| windows_of(eg, a, 2).map(|w| (i, w))),
                        None => None,
                    };
                    if let Some(z) = hit.and_then(|(at, w)| found(head, &args, at, w)) {
                        return Some(z);
                    }
                }
                continue;
            }
            // three dimensions: the planes' zip, then the rows' zip inside it
            for (e1, body1, z1) in maps_of(eg, body) {
                let Some(ev1) = symbol_of(eg, e1) else { continue };
                for (_, kids0) in zip_of(eg, z1) {
                    for (_, kids1) in zip_of(eg, body1) {
                        let outer = zip_components(eg, &kids0, ev).filter(|k| k.len() == args.len());
                        let inner = zip_components(eg, &kids1, ev1).filter(|k| k.len() == args.len());
                        let (Some(outer), Some(inner)) = (outer, inner) else {
                            continue;
                        };
                        let at = transposed_at(&outer).filter(|&a| transposed_at(&inner) == Some(a));
                        let hit = at.and_then(|at| raw_windows(eg, args[at], 3).map(|w| (at, w)));
                        if let Some(z) = hit.and_then(|(at, w)| found(head, &args, at, w)) {
                            return Some(z);
                        }
                    }
                }
            }
        }
    }
    None
}

/// As `third_len`, of the windows before `slide3d`'s reordering (`raw_windows`): the rows of
/// a plane's windows.
fn raw_third_len(eg: &EG, id: Id) -> Option<arith::ArithExpr> {
    let (_, planes) = slide_in(eg, id)?;
    maps_of(eg, planes)
        .into_iter()
        .find_map(|(_, body, _)| eg[body].data.inner.clone())
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
