//! The e-graph language and its analysis (lengths and a few properties per e-class); the
//! rules that rewrite it are in `rules`, the sizes they share with lowering in `sizes`.
//!
//! Encoding (no binders are ever moved out of a scope, so names stay correct):
//! - expressions: `(map f xs)`, `(reduce f z xs)`, `(split k xs)`, `(join xs)`, `(asVector w xs)`,
//!   `(asScalar xs)`, `(let x v body)`, variables and opaque leaves (`Sym`), and any other
//!   primitive as `Other("head|i", args)` (head text and index into the table of its type);
//! - functions: an opaque lambda (a leaf `@i`), `(lam x body)` (a one-parameter lambda whose body
//!   holds array primitives), `(mapf f)` = `λc. map f c`, `(reducef f z)` = `λc. reduce f z c`,
//!   `(comp f g)` = `λx. f (g x)`.

use arith::ArithExpr;
use egg::{define_language, Analysis, DidMerge, EGraph, Id, Language, Pattern, Searcher, Symbol};
use std::collections::BTreeMap;

/// Re-exported where it was first defined: other crates' tests name it so.
pub use crate::sizes::RegBlockSizes;

define_language! {
    pub enum Lift {
        "map" = Map([Id; 2]),
        "reduce" = Reduce([Id; 3]),
        "split" = Split([Id; 2]),
        "join" = Join(Id),
        "asVector" = AsVector([Id; 2]),
        "asScalar" = AsScalar(Id),
        "lam" = Lam([Id; 2]),
        "mapf" = MapF(Id),
        "reducef" = ReduceF([Id; 2]),
        // `reducef` whose sequential loop is unrolled (its argument has a small known length)
        "reducefu" = ReduceFU([Id; 2]),
        "comp" = Comp([Id; 2]),
        "let" = Let([Id; 3]),
        "transpose" = Transpose(Id),
        // The same array, copied into local memory by the work-group that uses it.
        "local" = Local(Id),
        // The same work-group block, computed tile by tile along the dot products' length.
        "ktile" = KTile([Id; 2]),
        // `(wgreduce s f z xs)` = `reduce f z xs`, computed by a work-group of `s` work-items.
        "wgreduce" = WgReduce([Id; 4]),
        // `(ttile t f m)` = `map (mapf f) (transpose m)`, computed by work-groups that each copy a
        // `t × t` tile of `m` into local memory and write it transposed.
        "ttile" = TTile([Id; 3]),
        // `(stage c)` = `c`, chunks of rows each copied into local memory by the work-group
        // that maps it, one row per work-item (`stage-rows`).
        "stage" = Stage(Id),
        // `(tiles T B w)` = `w`, an array that every work-item of a work-group reads whole, read
        // by the group in tiles of `T` elements staged in local memory, each work-item folding
        // each element into the results of `B` rows (`reuse-tiles-T`, `reuse-tiles-T-bB`).
        "tiles" = Tiles([Id; 3]),
        // `(colreduce bc r g f xs)` = `map f xs`, `xs` the columns of a stored matrix and `f`'s
        // body one reduction along its column: work-groups of `bc` columns × `r` row chunks,
        // `g` of them per column block (each over every `g`-th row), each work-item reducing
        // every `r`-th of those elements of its column (`col-reduce-*`).
        "colreduce" = ColReduce([Id; 5]),
        // `(gridreduce g s f z xs)` = `reduce f z xs`, computed in one launch by `g` work-groups
        // of `s` work-items reading `xs` a grid apart, the last group to finish combining the
        // groups' results (`grid-reduce-*`).
        "gridreduce" = GridReduce([Id; 5]),
        // `(rblock c r g x ys)` = `map (λr. join (map g ys)) x`, `g` a dot product of `r` and
        // its argument: a matrix product whose work-groups compute tiles of the result and
        // whose work-items compute register blocks of a tile (`c` packs the tile and block
        // sizes, see `RegBlock`).
        "rblock" = RBlock([Id; 5]),
        // `(stagev c)` = `c`: as `stage`, the block copied as 4-vectors into unpadded local
        // memory (`stage-rows-vec`).
        "stagev" = StageVec(Id),
        // `(stencil c f x)` = the map of `f` over the windows of `slide` (in 1 to 3 dimensions)
        // of `x`, computed by work-groups of tiles (`rules::stencil`, `StencilTile` in `c`).
        "stencil" = Stencil([Id; 3]),
        // `(scan f z xs)`: the inclusive prefix; only scans of scalars or vectors are encoded as
        // this node (`encode`), others stay `Other` and keep their default lowering.
        "scan" = Scan([Id; 3]),
        // `(scanglb f z xs)` = `scan f z xs`, the whole array in one launch (tiles and a
        // decoupled look-back, `scanGlb`); a `map g ys` as `xs` is read inline (rules `scan`).
        "scanglb" = ScanGlb([Id; 3]),
        // `(scanrows f z xss)` = `map (λr. scan f z r) xss`, every row in the same launch.
        "scanrows" = ScanRows([Id; 3]),
        // `(mapscan h s)` = `map h s`, `s` a scan in one launch that applies `h` as it stores.
        "mapscan" = MapScan([Id; 2]),
        Num(i64),
        Sym(Symbol),
        Other(Symbol, Vec<Id>),
    }
}

/// What a function does to the outer length of its argument.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Ret {
    #[default]
    Unknown,
    /// The result has this outer length whatever the argument.
    Const(ArithExpr),
    /// The result has the argument's outer length (`mapf`).
    Same,
}

/// Associative operators whose partial reductions we know to be sound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assoc {
    Add,
    Mul,
    MinMax,
}

pub const LANEWISE: u16 = 1;
/// The class is an array whose elements are `float` scalars.
pub const FLOAT_ELEMS: u16 = 2;
pub const HAS_MAPF: u16 = 4;
/// Contains `map (reducef ..) _`.
pub const MAP_REDUCEF: u16 = 8;
/// Is (among others) `join (map (reducef ..) _)`: already a partial reduction.
pub const PARTIAL: u16 = 16;
pub const REDUCEF: u16 = 32;
/// The class is an array of arrays of `float` scalars.
pub const FLOAT_ROWS: u16 = 64;
/// A work-group tile (a parameter made by the tiling rule): it may be staged in local memory.
pub const TILE: u16 = 128;
/// A `zip` of two arrays.
pub const ZIP2: u16 = 256;
/// `map h (zip p q)`.
pub const MAP_ZIP: u16 = 512;
/// `reduce f z (map h (zip p q))` with `z` neutral for the associative `f`: a dot product.
pub const DOT: u16 = 1024;
/// A function whose body is a dot product.
pub const DOT_FN: u16 = 2048;
/// The class is an array of arrays of scalars or vectors (what `stage-rows` copies).
pub const SCALAR_ROWS: u16 = 4096;
/// A one-parameter function whose body is the product of two `float` components of its
/// argument, `(* (get #i p) (get #j p))`, or sums, differences and products of components
/// (`a·b + c`): zero where its components are (`grid-reduce-*` pads a dot product's vectors
/// with zeros; `encode::zero_at_zero`). The top bit, away from the flags added in order.
pub const ZERO_PRODUCT: u16 = 1 << 15;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Data {
    /// Outer length (arrays).
    pub len: Option<ArithExpr>,
    /// Length of the elements, when they are arrays.
    pub inner: Option<ArithExpr>,
    /// Functions: the result's outer length.
    pub ret: Ret,
    pub flags: u16,
    /// Opaque binary functions: the associative operator they are.
    pub assoc: Option<Assoc>,
    /// Literal leaves: their value.
    pub lit: Option<f64>,
    /// Variables that may occur free (sorted): a term is only moved out of a binder's scope
    /// when it cannot mention the binder.
    pub free: Vec<Symbol>,
    /// Levels of partial reduction that produced this array (partial reductions of partial
    /// reductions stop at two levels).
    pub partial: u8,
}

fn union(a: &[Symbol], b: &[Symbol]) -> Vec<Symbol> {
    let mut u: Vec<Symbol> = a.iter().chain(b).copied().collect();
    u.sort_unstable_by(|x, y| x.as_str().cmp(y.as_str()));
    u.dedup();
    u
}

/// Facts about a leaf or an `Other` head, taken from the type checker.
#[derive(Clone, Debug, Default)]
pub struct LeafInfo {
    pub data: Data,
}

#[derive(Clone, Default)]
pub struct LiftAnalysis {
    pub leaves: BTreeMap<Symbol, LeafInfo>,
    pub sizes: BTreeMap<String, i64>,
    /// The program's size variables: lengths over anything else (existential lengths) are never split.
    pub declared: Vec<String>,
    /// The program's parameters: an array that mentions no other variable is computed once,
    /// at host level.
    pub params: Vec<Symbol>,
    /// The opaque leaves `get #k v`: `(k, v)` (`encode::Encoded::components`).
    pub components: BTreeMap<Symbol, (usize, Symbol)>,
}

pub type EG = EGraph<Lift, LiftAnalysis>;

fn merge_opt<T: Clone + PartialEq>(a: &mut Option<T>, b: &Option<T>) -> (bool, bool) {
    match (a.is_none(), b.is_none()) {
        (true, false) => {
            *a = b.clone();
            (true, false)
        }
        (false, true) => (false, true),
        _ => (false, false),
    }
}

impl Analysis<Lift> for LiftAnalysis {
    type Data = Data;

    fn make(egraph: &mut EG, enode: &Lift, id: Id) -> Data {
        let mut data = Self::shape(egraph, enode, id);
        let free = |i: &Id| egraph[*i].data.free.clone();
        let without = |v: &Id, f: Vec<Symbol>| -> Vec<Symbol> {
            let bound = egraph[*v].data.free.clone();
            f.into_iter().filter(|s| !bound.contains(s)).collect()
        };
        data.free = match enode {
            Lift::Lam([x, b]) => without(x, free(b)),
            Lift::Let([x, v, b]) => union(&free(v), &without(x, free(b))),
            Lift::Sym(_) | Lift::Num(_) => data.free,
            _ => enode
                .children()
                .iter()
                .fold(data.free.clone(), |acc, c| union(&acc, &free(c))),
        };
        data
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        let free = union(&a.free, &b.free);
        let (mut ca, cb) = self.merge_shape(a, b.clone());
        ca |= free.len() != a.free.len();
        let cb = cb || free.len() != b.free.len();
        a.free = free;
        DidMerge(ca, cb)
    }
}

impl LiftAnalysis {
    fn shape(egraph: &mut EG, enode: &Lift, _id: Id) -> Data {
        let d = |id: &Id| egraph[*id].data.clone();
        match enode {
            Lift::Num(n) => Data {
                lit: Some(*n as f64),
                ..Data::default()
            },
            Lift::Sym(s) | Lift::Other(s, _) => egraph
                .analysis
                .leaves
                .get(s)
                .map(|l| l.data.clone())
                .unwrap_or_default(),
            Lift::Map([f, x]) => {
                let (f, x) = (d(f), d(x));
                let inner = match &f.ret {
                    Ret::Const(c) => Some(c.clone()),
                    Ret::Same => x.inner.clone(),
                    Ret::Unknown => None,
                };
                let mut flags = 0;
                if f.flags & REDUCEF != 0 {
                    flags |= MAP_REDUCEF;
                }
                if f.flags & LANEWISE != 0 && x.flags & FLOAT_ELEMS != 0 {
                    flags |= FLOAT_ELEMS;
                }
                if x.flags & ZIP2 != 0 {
                    flags |= MAP_ZIP;
                }
                Data {
                    len: x.len,
                    inner,
                    flags,
                    partial: if f.flags & REDUCEF != 0 { x.partial } else { 0 },
                    ..Data::default()
                }
            }
            Lift::Reduce([f, z, x]) => {
                let x = d(x);
                let dot = x.flags & MAP_ZIP != 0 && neutral_of(&d(f), &d(z));
                Data {
                    len: Some(ArithExpr::cst(1)),
                    flags: (x.flags & FLOAT_ELEMS) | if dot { DOT } else { 0 },
                    ..Data::default()
                }
            }
            Lift::WgReduce([_, _, _, x]) | Lift::GridReduce([_, _, _, _, x]) => Data {
                len: Some(ArithExpr::cst(1)),
                flags: d(x).flags & FLOAT_ELEMS,
                ..Data::default()
            },
            Lift::Split([k, x]) => {
                let k = d(k).lit.map(|v| ArithExpr::cst(v as i64));
                let x = d(x);
                let len = match (&x.len, &k) {
                    (Some(n), Some(k)) => Some(n.div_assume_exact(k)),
                    _ => None,
                };
                Data {
                    len,
                    inner: k,
                    partial: x.partial,
                    ..Data::default()
                }
            }
            Lift::Join(x) => {
                let x = d(x);
                let len = match (&x.len, &x.inner) {
                    (Some(n), Some(m)) => Some(n.mul(m)),
                    _ => None,
                };
                let partial = x.flags & MAP_REDUCEF != 0;
                Data {
                    len,
                    flags: if partial { PARTIAL } else { 0 },
                    partial: if partial { x.partial + 1 } else { 0 },
                    ..Data::default()
                }
            }
            Lift::AsVector([w, x]) => {
                let w = d(w).lit.unwrap_or(1.0) as i64;
                Data {
                    len: d(x).len.map(|n| n.div_assume_exact(&ArithExpr::cst(w))),
                    ..Data::default()
                }
            }
            Lift::AsScalar(_) => Data::default(),
            Lift::Lam([_, body]) => {
                let b = d(body);
                Data {
                    ret: b.len.map(Ret::Const).unwrap_or_default(),
                    flags: if b.flags & DOT != 0 { DOT_FN } else { 0 },
                    ..Data::default()
                }
            }
            Lift::MapF(f) => Data {
                ret: Ret::Same,
                flags: HAS_MAPF | (d(f).flags & REDUCEF),
                ..Data::default()
            },
            Lift::ReduceF(_) | Lift::ReduceFU(_) => Data {
                ret: Ret::Const(ArithExpr::cst(1)),
                flags: REDUCEF,
                ..Data::default()
            },
            Lift::Comp([f, g]) => {
                let (f, g) = (d(f), d(g));
                let ret = match f.ret {
                    Ret::Same => g.ret.clone(),
                    r => r,
                };
                Data {
                    ret,
                    flags: f.flags & g.flags & LANEWISE,
                    ..Data::default()
                }
            }
            Lift::Let([_, _, b]) => d(b),
            Lift::Transpose(x) => {
                let x = d(x);
                Data {
                    len: x.inner,
                    inner: x.len,
                    flags: x.flags & FLOAT_ROWS,
                    partial: x.partial,
                    ..Data::default()
                }
            }
            Lift::KTile([_, x]) => {
                let x = d(x);
                Data {
                    len: x.len,
                    inner: x.inner,
                    ..Data::default()
                }
            }
            Lift::TTile([_, _, m]) => {
                let m = d(m);
                Data {
                    len: m.inner,
                    inner: m.len,
                    ..Data::default()
                }
            }
            Lift::RBlock([_, _, _, x, ys]) => {
                let (x, ys) = (d(x), d(ys));
                Data {
                    len: x.len,
                    inner: ys.len,
                    ..Data::default()
                }
            }
            Lift::Local(x) | Lift::Stage(x) | Lift::StageVec(x) => {
                let x = d(x);
                Data {
                    len: x.len,
                    inner: x.inner,
                    flags: x.flags & (FLOAT_ROWS | FLOAT_ELEMS),
                    ..Data::default()
                }
            }
            Lift::Tiles([_, _, x]) => {
                let x = d(x);
                Data {
                    len: x.len,
                    inner: x.inner,
                    flags: x.flags & (FLOAT_ROWS | FLOAT_ELEMS),
                    ..Data::default()
                }
            }
            // the map it equals (merged with its class), but no fact of its own
            Lift::Stencil(_) => Data::default(),
            // the map it equals, but no fact that would let other rules look inside
            Lift::Scan([_, _, x]) | Lift::ScanGlb([_, _, x]) | Lift::ScanRows([_, _, x]) => {
                let x = d(x);
                Data {
                    len: x.len,
                    inner: x.inner,
                    flags: x.flags & (FLOAT_ELEMS | SCALAR_ROWS | FLOAT_ROWS),
                    ..Data::default()
                }
            }
            Lift::MapScan([f, x]) => {
                let (f, x) = (d(f), d(x));
                Data {
                    len: x.len,
                    inner: match &f.ret {
                        Ret::Const(c) => Some(c.clone()),
                        Ret::Same | Ret::Unknown => None,
                    },
                    ..Data::default()
                }
            }
            Lift::ColReduce([_, _, _, f, x]) => {
                let (f, x) = (d(f), d(x));
                Data {
                    len: x.len,
                    inner: match &f.ret {
                        Ret::Const(c) => Some(c.clone()),
                        Ret::Same | Ret::Unknown => None,
                    },
                    ..Data::default()
                }
            }
        }
    }

    fn merge_shape(&mut self, a: &mut Data, b: Data) -> (bool, bool) {
        let (mut ca, mut cb) = (false, false);
        for (x, y) in [merge_opt(&mut a.len, &b.len), merge_opt(&mut a.inner, &b.inner)] {
            ca |= x;
            cb |= y;
        }
        let (x, y) = merge_opt(&mut a.assoc, &b.assoc);
        ca |= x;
        cb |= y;
        let (x, y) = merge_opt(&mut a.lit, &b.lit);
        ca |= x;
        cb |= y;
        if a.ret == Ret::Unknown && b.ret != Ret::Unknown {
            a.ret = b.ret.clone();
            ca = true;
        } else if b.ret == Ret::Unknown && a.ret != Ret::Unknown {
            cb = true;
        }
        let f = a.flags | b.flags;
        ca |= f != a.flags;
        cb |= f != b.flags;
        a.flags = f;
        let p = a.partial.max(b.partial);
        ca |= p != a.partial;
        cb |= p != b.partial;
        a.partial = p;
        (ca, cb)
    }
}

/// Count of pattern matches (used in tests).
pub fn count_matches(eg: &EG, pat: &str) -> usize {
    let p: Pattern<Lift> = pat.parse().expect("pattern");
    p.search(eg).iter().map(|m| m.substs.len()).sum()
}

/// Whether `z` is the neutral element of the associative operator `f` (any `z` for min/max,
/// which are idempotent).
pub fn neutral_of(f: &Data, z: &Data) -> bool {
    match f.assoc {
        Some(Assoc::Add) => z.lit == Some(0.0),
        Some(Assoc::Mul) => z.lit == Some(1.0),
        Some(Assoc::MinMax) => true,
        None => false,
    }
}
