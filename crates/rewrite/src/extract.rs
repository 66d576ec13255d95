//! Top-k extraction: for every e-class, the `k` smallest distinct terms (bottom-up fixpoint,
//! children combined with a bound on the sum of their ranks), then a wider list for the root.

use crate::egraph::{Lift, EG};
use arith::ArithExpr;
use egg::{Id, Language, Symbol};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TOp {
    Map,
    Reduce,
    Split(i64),
    Join,
    AsVector(i64),
    AsScalar,
    Lam,
    MapF,
    ReduceF,
    ReduceFU,
    /// `reduce` with an unrolled loop (made only by lowering `reducefu`).
    ReduceU,
    Comp,
    Let,
    Transpose,
    Local,
    KTile(i64),
    Num(i64),
    Sym(Symbol),
    Other(Symbol),
    /// Application of an opaque function (made only by lowering).
    App,
    // Last, so that the hashes of the other operators (the extraction's tie-break between
    // terms of one size) do not depend on whether these rules exist.
    TTile(i64),
    Stage,
    /// `reduce` by a work-group of this many work-items.
    WgReduce(i64),
    /// A map over columns reduced by column blocks of work-groups: columns per work-group, row
    /// chunks per work-group, work-groups per block of columns.
    ColReduce(i64, i64, i64),
    /// `reduce` by this many work-groups of this many work-items, in one launch.
    GridReduce(i64, i64),
    /// A register-blocked matrix product (`sizes::RegBlockSizes::pack`).
    RBlock(i64),
    /// An array read whole by every work-item, in tiles of this length staged in local memory,
    /// each element folded into this many rows' results by one work-item.
    Tiles(i64, i64),
    /// `Stage` with the block copied as 4-vectors into unpadded local memory.
    StageVec,
    /// A map over the windows of a stencil, tiled (`stencil_sizes::StencilTile::pack`).
    Stencil(i64),
    /// The scans (`egraph::Lift`'s `scan`, `scanglb`, `scanrows`, `mapscan`).
    Scan,
    ScanGlb,
    ScanRows,
    MapScan,
}

/// Hashes an operator by what it means: a symbol by its text, not by egg's interned index,
/// which depends on the order in which every exploration of the process interned its names (so
/// that extraction's tie-break between terms of one size is the same in every process).
fn hash_op(op: &TOp, h: &mut DefaultHasher) {
    match op {
        TOp::Sym(s) | TOp::Other(s) => {
            std::mem::discriminant(op).hash(h);
            s.as_str().hash(h);
        }
        _ => op.hash(h),
    }
}

#[derive(Debug)]
pub struct Term {
    pub op: TOp,
    pub kids: Vec<Rc<Term>>,
    pub len: Option<ArithExpr>,
    pub inner: Option<ArithExpr>,
    pub size: u32,
    pub key: u64,
}

impl Term {
    pub fn new(op: TOp, kids: Vec<Rc<Term>>, len: Option<ArithExpr>, inner: Option<ArithExpr>) -> Rc<Term> {
        let mut h = DefaultHasher::new();
        hash_op(&op, &mut h);
        for k in &kids {
            k.key.hash(&mut h);
        }
        // Staging adds no node to the size that extraction ranks by: a staged map would
        // otherwise lose its place among a class's smallest terms to the unstaged maps and
        // never reach the cost model. Reading in tiles counts one node less than the array
        // read (its tile length, row count and itself not counted): among terms of one size the hash
        // order would otherwise drop the tiled row functions of the useful chunk sizes.
        let own = u32::from(!matches!(op, TOp::Stage | TOp::StageVec));
        let size = own + kids.iter().map(|k| k.size).sum::<u32>();
        let size = if matches!(op, TOp::Tiles(..)) { size - 4 } else { size };
        Rc::new(Term {
            op,
            key: h.finish(),
            kids,
            len,
            inner,
            size,
        })
    }

    /// The term as an S-expression (for descriptions and tests).
    pub fn sexp(&self) -> String {
        let head = match &self.op {
            TOp::Map => "map".to_string(),
            TOp::Reduce => "reduce".into(),
            TOp::Split(k) => format!("split {k}"),
            TOp::Join => "join".into(),
            TOp::AsVector(w) => format!("asVector {w}"),
            TOp::AsScalar => "asScalar".into(),
            TOp::Lam => "lam".into(),
            TOp::MapF => "mapf".into(),
            TOp::ReduceF => "reducef".into(),
            TOp::ReduceFU => "reducefu".into(),
            TOp::ReduceU => "reduceu".into(),
            TOp::Comp => "comp".into(),
            TOp::Let => "let".into(),
            TOp::Transpose => "transpose".into(),
            TOp::Local => "local".into(),
            TOp::KTile(k) => format!("ktile {k}"),
            TOp::WgReduce(k) => format!("wgreduce {k}"),
            TOp::TTile(k) => format!("ttile {k}"),
            TOp::RBlock(c) if c & crate::sizes::RBLOCK_MMA != 0 => {
                let rows = if c & crate::sizes::RBLOCK_ROWS != 0 {
                    " rows"
                } else {
                    ""
                };
                format!("mmablock {}{rows}", crate::sizes::RegBlockSizes::unpack(*c).name())
            }
            TOp::RBlock(c) if c & crate::sizes::RBLOCK_ROWS != 0 => {
                format!("rblock {} rows", crate::sizes::RegBlockSizes::unpack(*c).name())
            }
            TOp::RBlock(c) => format!("rblock {}", crate::sizes::RegBlockSizes::unpack(*c).name()),
            TOp::Stage => "stage".into(),
            TOp::ColReduce(bc, r, g) => format!("colreduce {bc} {r} {g}"),
            TOp::GridReduce(g, s) => match g >> crate::sizes::GRID_LANES_SHIFT {
                0 | 1 => format!("gridreduce {g} {s}"),
                w => format!("gridreduce {}v{w} {s}", g & ((1 << crate::sizes::GRID_LANES_SHIFT) - 1)),
            },
            TOp::Tiles(t, 1) => format!("tiles {t}"),
            TOp::Tiles(t, b) => format!("tiles {t} rows {b}"),
            TOp::StageVec => "stagev".into(),
            TOp::Stencil(c) => format!("stencil {}", crate::stencil_sizes::StencilTile::unpack(*c).name()),
            TOp::Scan => "scan".into(),
            TOp::ScanGlb => "scanglb".into(),
            TOp::ScanRows => "scanrows".into(),
            TOp::MapScan => "mapscan".into(),
            TOp::Num(n) => return n.to_string(),
            TOp::Sym(s) => return s.to_string(),
            TOp::Other(s) => s.as_str().split('|').next().unwrap_or("").to_string(),
            TOp::App => "app".into(),
        };
        let mut s = format!("({head}");
        for k in &self.kids {
            if matches!(
                self.op,
                TOp::Split(_)
                    | TOp::AsVector(_)
                    | TOp::KTile(_)
                    | TOp::WgReduce(_)
                    | TOp::TTile(_)
                    | TOp::ColReduce(..)
                    | TOp::GridReduce(..)
                    | TOp::RBlock(_)
                    | TOp::Tiles(..)
                    | TOp::Stencil(_)
            ) && matches!(k.op, TOp::Num(_))
            {
                continue;
            }
            s.push(' ');
            s.push_str(&k.sexp());
        }
        s.push(')');
        s
    }
}

fn op_of(n: &Lift, kids: &[Rc<Term>]) -> TOp {
    let num = |i: usize| match kids.get(i).map(|k| &k.op) {
        Some(TOp::Num(v)) => *v,
        _ => 0,
    };
    match n {
        Lift::Map(_) => TOp::Map,
        Lift::Reduce(_) => TOp::Reduce,
        Lift::Split(_) => TOp::Split(num(0)),
        Lift::Join(_) => TOp::Join,
        Lift::AsVector(_) => TOp::AsVector(num(0)),
        Lift::AsScalar(_) => TOp::AsScalar,
        Lift::Lam(_) => TOp::Lam,
        Lift::MapF(_) => TOp::MapF,
        Lift::ReduceF(_) => TOp::ReduceF,
        Lift::ReduceFU(_) => TOp::ReduceFU,
        Lift::Comp(_) => TOp::Comp,
        Lift::Let(_) => TOp::Let,
        Lift::Transpose(_) => TOp::Transpose,
        Lift::Local(_) => TOp::Local,
        Lift::KTile(_) => TOp::KTile(num(0)),
        Lift::WgReduce(_) => TOp::WgReduce(num(0)),
        Lift::TTile(_) => TOp::TTile(num(0)),
        Lift::Stage(_) => TOp::Stage,
        Lift::ColReduce(_) => TOp::ColReduce(num(0), num(1), num(2)),
        Lift::GridReduce(_) => TOp::GridReduce(num(0), num(1)),
        Lift::RBlock(_) => TOp::RBlock(num(0)),
        Lift::Tiles(_) => TOp::Tiles(num(0), num(1)),
        Lift::StageVec(_) => TOp::StageVec,
        Lift::Stencil(_) => TOp::Stencil(num(0)),
        Lift::Scan(_) => TOp::Scan,
        Lift::ScanGlb(_) => TOp::ScanGlb,
        Lift::ScanRows(_) => TOp::ScanRows,
        Lift::MapScan(_) => TOp::MapScan,
        Lift::Num(v) => TOp::Num(*v),
        Lift::Sym(s) => TOp::Sym(*s),
        Lift::Other(s, _) => TOp::Other(*s),
    }
}

/// Index tuples of `lens.len()` positions, each below its length, with a sum below `bound`.
fn combos(lens: &[usize], bound: usize) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &l in lens {
        let mut next = vec![];
        for c in &out {
            let used: usize = c.iter().sum();
            for i in 0..l {
                if used + i >= bound.max(1) {
                    break;
                }
                let mut c2 = c.clone();
                c2.push(i);
                next.push(c2);
            }
        }
        out = next;
    }
    out
}

fn terms_of_class(eg: &EG, best: &BTreeMap<Id, Vec<Rc<Term>>>, id: Id, k: usize) -> Vec<Rc<Term>> {
    let class = &eg[id];
    let mut cands: Vec<Rc<Term>> = vec![];
    for node in &class.nodes {
        let lists: Option<Vec<&Vec<Rc<Term>>>> = node
            .children()
            .iter()
            .map(|c| best.get(&eg.find(*c)).filter(|l| !l.is_empty()))
            .collect();
        let Some(lists) = lists else { continue };
        let lens: Vec<usize> = lists.iter().map(|l| l.len()).collect();
        for c in combos(&lens, k) {
            let kids: Vec<Rc<Term>> = c.iter().zip(&lists).map(|(i, l)| l[*i].clone()).collect();
            let op = op_of(node, &kids);
            cands.push(Term::new(op, kids, class.data.len.clone(), class.data.inner.clone()));
        }
    }
    cands.sort_by_key(|t| (t.size, t.key));
    let mut seen = BTreeSet::new();
    cands.retain(|t| seen.insert(t.key));
    cands.truncate(k);
    cands
}

/// The `root_k` smallest distinct terms of `root`, each class keeping `k` of its own.
pub fn top_terms(eg: &EG, root: Id, k: usize, root_k: usize, max_passes: usize) -> Vec<Rc<Term>> {
    let mut ids: Vec<Id> = eg.classes().map(|c| c.id).collect();
    ids.sort();
    let mut best: BTreeMap<Id, Vec<Rc<Term>>> = BTreeMap::new();
    for _ in 0..max_passes {
        let mut changed = false;
        for &id in &ids {
            let new = terms_of_class(eg, &best, id, k);
            let old = best.get(&id);
            let same = old.is_some_and(|o| o.len() == new.len() && o.iter().zip(&new).all(|(a, b)| a.key == b.key));
            if !same {
                changed = true;
                best.insert(id, new);
            }
        }
        if !changed {
            break;
        }
    }
    terms_of_class(eg, &best, eg.find(root), root_k)
}

/// `terms`, then each term that reads an array in tiles again with every other tiling
/// `(tile length, rows a work-item)` of `tilings` that `fits` the array read (`fits(len, t)`:
/// the `reuse-tiles-*` rules' condition, the only one that depends on the tiling, so each such
/// term is in the e-graph too). Extraction keeps few terms a class and breaks ties of size by
/// hash, so a tiling can be left out of every term that reaches the root: once two rows a
/// work-item existed, mri-q's tuned best before them (one row, tiles of 64, groups of 64:
/// 1.180 ms on the H200 against 1.191) was no longer a candidate.
pub fn with_tile_siblings(
    terms: Vec<Rc<Term>>,
    tilings: &[(i64, i64)],
    fits: impl Fn(&ArithExpr, i64) -> bool,
) -> Vec<Rc<Term>> {
    fn has_tiles(t: &Term) -> bool {
        matches!(t.op, TOp::Tiles(..)) || t.kids.iter().any(|k| has_tiles(k))
    }
    /// `t` with every `tiles` node read as `(tile, rows)`, or `None` where it does not fit.
    fn retile(t: &Rc<Term>, tile: i64, rows: i64, fits: &dyn Fn(&ArithExpr, i64) -> bool) -> Option<Rc<Term>> {
        if !has_tiles(t) {
            return Some(t.clone());
        }
        if let TOp::Tiles(..) = t.op {
            let w = t.kids.get(2)?;
            if !w.len.as_ref().is_some_and(|n| fits(n, tile)) {
                return None;
            }
            let w = retile(w, tile, rows, fits)?;
            let num = |v: i64| Term::new(TOp::Num(v), vec![], None, None);
            return Some(Term::new(
                TOp::Tiles(tile, rows),
                vec![num(tile), num(rows), w],
                t.len.clone(),
                t.inner.clone(),
            ));
        }
        let kids = t
            .kids
            .iter()
            .map(|k| retile(k, tile, rows, fits))
            .collect::<Option<Vec<_>>>()?;
        Some(Term::new(t.op.clone(), kids, t.len.clone(), t.inner.clone()))
    }
    let mut seen: BTreeSet<u64> = terms.iter().map(|t| t.key).collect();
    let mut out = terms.clone();
    for t in terms.iter().filter(|t| has_tiles(t)) {
        for &(tile, rows) in tilings {
            if let Some(s) = retile(t, tile, rows, &fits) {
                if seen.insert(s.key) {
                    out.push(s);
                }
            }
        }
    }
    out
}
