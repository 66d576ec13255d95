//! The e-graph language, its analysis (lengths and a few properties per e-class) and the rules.
//!
//! Encoding (no binders are ever moved out of a scope, so names stay correct):
//! - expressions: `(map f xs)`, `(reduce f z xs)`, `(split k xs)`, `(join xs)`, `(asVector w xs)`,
//!   `(asScalar xs)`, `(let x v body)`, variables and opaque leaves (`Sym`), and any other
//!   primitive as `Other("head|i", args)` (head text and index into the table of its type);
//! - functions: an opaque lambda (a leaf `@i`), `(lam x body)` (a one-parameter lambda whose body
//!   holds array primitives), `(mapf f)` = `λc. map f c`, `(reducef f z)` = `λc. reduce f z c`,
//!   `(comp f g)` = `λx. f (g x)`.

use arith::ArithExpr;
use egg::{
    define_language, Analysis, Applier, DidMerge, EGraph, Id, Language, Pattern, PatternAst, Rewrite, Searcher, Subst,
    Symbol, Var,
};
use std::collections::BTreeMap;

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

#[derive(Default)]
pub struct LiftAnalysis {
    pub leaves: BTreeMap<Symbol, LeafInfo>,
    pub sizes: BTreeMap<String, i64>,
    /// The program's size variables: lengths over anything else (existential lengths) are never split.
    pub declared: Vec<String>,
    /// The program's parameters: an array that mentions no other variable is computed once,
    /// at host level.
    pub params: Vec<Symbol>,
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
            // the map it equals, but no fact that would let other rules look inside
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

fn var(s: &str) -> Var {
    s.parse().expect("pattern variable")
}

fn cond_split(k: i64) -> impl Fn(&mut EG, Id, &Subst) -> bool + Send + Sync {
    move |eg, _, s| {
        let (f, x) = (&eg[s[var("?f")]].data, &eg[s[var("?x")]].data);
        f.flags & HAS_MAPF == 0
            && x.len
                .as_ref()
                .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
    }
}

fn pat(s: &str) -> Pattern<Lift> {
    s.parse().expect("pattern")
}

fn conditional(
    name: String,
    lhs: &str,
    rhs: String,
    cond: impl Fn(&mut EG, Id, &Subst) -> bool + Send + Sync + 'static,
) -> Rewrite<Lift, LiftAnalysis> {
    let applier = egg::ConditionalApplier {
        condition: cond,
        applier: pat(&rhs),
    };
    Rewrite::new(name, pat(lhs), applier).expect("rule")
}

pub fn algorithmic_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules: Vec<Rewrite<Lift, LiftAnalysis>> = vec![
        // map f (map g xs) = map (f ∘ g) xs
        egg::rewrite!("map-fusion"; "(map ?f (map ?g ?x))" => "(map (comp ?f ?g) ?x)"),
        // map (f ∘ g) xs = map f (map g xs)
        egg::rewrite!("map-fission"; "(map (comp ?f ?g) ?x)" => "(map ?f (map ?g ?x))"),
        // map f (join xs) = join (map (map f) xs): lets a map fuse with the map that made the
        // rows (one kernel instead of two)
        egg::rewrite!("map-join"; "(map ?f (join ?x))" => "(join (map (mapf ?f) ?x))"),
    ];
    let w = opts.vector_width;
    // map f xs = asScalar (map f (asVector w xs)), f lane-wise arithmetic on floats, w | len
    rules.push(conditional(
        format!("vectorize-{w}"),
        "(map ?f ?x)",
        format!("(asScalar (map ?f (asVector {w} ?x)))"),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let (f, x) = (&eg[s[var("?f")]].data, &eg[s[var("?x")]].data);
            f.flags & LANEWISE != 0
                && x.flags & FLOAT_ELEMS != 0
                && x.len
                    .as_ref()
                    .is_some_and(|n| may_split(n, i64::from(w), &eg.analysis.sizes, &eg.analysis.declared))
        },
    ));
    for &target in &opts.stride_targets {
        rules.push(
            Rewrite::new(
                format!("partial-reduce-strided-{target}"),
                pat("(reduce ?f ?z ?x)"),
                StridedPartial { target },
            )
            .expect("rule"),
        );
    }
    for &k in &opts.split_factors {
        // reduce f z xs = reduce f z (join (map (reducef f z) (split k xs))), f associative,
        // z its neutral element (any z for min/max), k | len(xs)
        rules.push(conditional(
            format!("partial-reduce-{k}"),
            "(reduce ?f ?z ?x)",
            format!("(reduce ?f ?z (join (map (reducef ?f ?z) (split {k} ?x))))"),
            move |eg: &mut EG, _: Id, s: &Subst| {
                let (f, z, x) = (&eg[s[var("?f")]].data, &eg[s[var("?z")]].data, &eg[s[var("?x")]].data);
                neutral_of(f, z)
                    && x.partial < 2
                    && x.len
                        .as_ref()
                        .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
            },
        ));
    }
    rules.extend(let_rules());
    rules
}

/// Whether the variable `x` may occur free in none of `ids`.
fn not_free_in(eg: &EG, x: Id, ids: &[Id]) -> bool {
    symbol_of(eg, x).is_some_and(|x| ids.iter().all(|i| !eg[*i].data.free.contains(&x)))
}

/// A `let` whose body only reduces or maps its variable (what the reader's K-normalization
/// makes of `reduce f z (map g xs)` where `xs` is a component of a tuple, as md's neighbour
/// list): the value moves into the body, so that `reduce ∘ map` fuses into one loop instead
/// of an array of the mapped values stored and read back (md at N = 73728, M = 128 on an H200:
/// 0.052 ms against 0.460).
pub fn let_rules() -> Vec<Rewrite<Lift, LiftAnalysis>> {
    vec![
        // let x v (reduce f z x) = reduce f z v, x free in neither f nor z
        conditional(
            "let-reduce".into(),
            "(let ?x ?v (reduce ?f ?z ?x))",
            "(reduce ?f ?z ?v)".into(),
            |eg: &mut EG, _: Id, s: &Subst| not_free_in(eg, s[var("?x")], &[s[var("?f")], s[var("?z")]]),
        ),
        // let x v (map g x) = map g v, x not free in g, v a leaf (a value computed elsewhere
        // or a view: moving a computation would only duplicate terms)
        conditional(
            "let-map".into(),
            "(let ?x ?v (map ?g ?x))",
            "(map ?g ?v)".into(),
            |eg: &mut EG, _: Id, s: &Subst| {
                let leaf = eg[s[var("?v")]].nodes.iter().any(|n| matches!(n, Lift::Sym(_)));
                leaf && not_free_in(eg, s[var("?x")], &[s[var("?g")]])
            },
        ),
    ]
}

/// The cooperative reductions: a reduction spread over the work-items of a work-group.
pub fn wg_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &s in opts
        .wg_sizes
        .iter()
        .filter(|s| s.count_ones() == 1 && **s <= opts.max_group)
    {
        // map (λr. … reduce f z xs …) rows = map (λr. … wgreduce s f z xs …) rows, for each
        // reduction the row function computes itself (not inside a function of its body: those
        // run per element): work-item l of a group of s reduces the strided slice
        // xs[l], xs[l+s], … (at every step consecutive work-items read consecutive elements),
        // then the s partial results are combined by a tree in local memory; f associative and
        // commutative (all we recognise are), z its neutral element, s | len(xs) and
        // len(xs) > s, xs not itself a partial reduction, rows not columns of an array
        rules.push(
            Rewrite::new(
                format!("wg-reduce-{s}"),
                pat("(map (lam ?r ?b) ?rows)"),
                WgRows { s, pad: false },
            )
            .expect("rule"),
        );
        for &items in &opts.wg_items {
            rules.push(
                Rewrite::new(
                    format!("wg-partial-{s}x{items}"),
                    pat("(reduce ?f ?z ?x)"),
                    WgPartial { s, items },
                )
                .expect("rule"),
            );
        }
    }
    rules.extend(grid_reduce_rules(opts));
    rules.extend(wg_reduce_pad_rules(opts));
    rules.extend(grid_reduce_lanes_rules(opts));
    rules
}

/// Whether `reduce f z x` may be a work-group reduction by `s` work-items.
fn wg_reducible(eg: &EG, f: Id, z: Id, x: Id, s: i64) -> bool {
    let (f, z, x) = (&eg[f].data, &eg[z].data, &eg[x].data);
    neutral_of(f, z)
        && x.partial == 0
        && x.len
            .as_ref()
            .is_some_and(|n| may_split(n, s, &eg.analysis.sizes, &eg.analysis.declared))
}

/// Whether the rows of `id` are columns of a stored array: a transpose, or a zip with one.
fn columns(eg: &EG, id: Id, depth: usize) -> bool {
    depth < 4
        && eg[id].nodes.iter().any(|n| match n {
            Lift::Transpose(_) => true,
            Lift::Other(h, kids) => {
                let head = h.as_str().split('|').next().unwrap_or("");
                head == "transpose" || (head == "zip" && kids.iter().any(|k| columns(eg, *k, depth + 1)))
            }
            _ => false,
        })
}

/// See `wg-reduce-*`: the reductions a row function computes at its own level (through `let`s,
/// the array arguments of maps and other primitives, joins) get their work-group form.
struct WgRows {
    s: i64,
    /// `wg-reduce-pad-*`: the reductions whose length `s` does not divide (`wg_padded`)
    pad: bool,
}

impl WgRows {
    fn collect(eg: &EG, class: Id, s: i64, pad: bool, seen: &mut Vec<Id>, found: &mut Vec<(Id, [Id; 3])>) {
        let class = eg.find(class);
        if seen.contains(&class) || seen.len() > 64 {
            return;
        }
        seen.push(class);
        for node in &eg[class].nodes {
            match node {
                Lift::Reduce([f, z, x]) => {
                    let ok = match pad {
                        false => wg_reducible(eg, *f, *z, *x, s),
                        true => wg_padded(eg, *f, *z, *x, s),
                    };
                    if ok {
                        found.push((class, [*f, *z, *x]));
                    }
                }
                Lift::Let([_, v, b]) => {
                    Self::collect(eg, *v, s, pad, seen, found);
                    Self::collect(eg, *b, s, pad, seen, found);
                }
                Lift::Map([_, x]) | Lift::Join(x) => Self::collect(eg, *x, s, pad, seen, found),
                Lift::Other(_, kids) => {
                    for k in kids {
                        Self::collect(eg, *k, s, pad, seen, found);
                    }
                }
                Lift::Split(_)
                | Lift::AsVector(_)
                | Lift::AsScalar(_)
                | Lift::Lam(_)
                | Lift::MapF(_)
                | Lift::ReduceF(_)
                | Lift::ReduceFU(_)
                | Lift::Comp(_)
                | Lift::Transpose(_)
                | Lift::Local(_)
                | Lift::KTile(_)
                | Lift::WgReduce(_)
                | Lift::TTile(_)
                | Lift::Stage(_)
                | Lift::StageVec(_)
                | Lift::Tiles(_)
                | Lift::ColReduce(_)
                | Lift::GridReduce(_)
                | Lift::RBlock(_)
                | Lift::Num(_)
                | Lift::Sym(_) => {}
            }
        }
    }
}

impl Applier<Lift, LiftAnalysis> for WgRows {
    fn apply_one(&self, eg: &mut EG, _: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        // a work-group reading a column reads one element per row: never coalesced, and a
        // work-item per column reads consecutive columns already
        if columns(eg, sub[var("?rows")], 0) {
            return vec![];
        }
        let mut found = vec![];
        Self::collect(eg, sub[var("?b")], self.s, self.pad, &mut vec![], &mut found);
        let mut changed = vec![];
        for (class, [f, z, x]) in found {
            let sn = eg.add(Lift::Num(self.s));
            let wg = eg.add(Lift::WgReduce([sn, f, z, x]));
            if eg.union(class, wg) {
                changed.push(wg);
            }
        }
        changed
    }
}

/// A whole-array reduction as one work-group reduction per chunk, then a reduction of the
/// chunks' results: `reduce f z xs` =
/// `reduce f z (join (map (lam c (wgreduce s f z c)) (split (s·e) xs)))`, f associative and
/// commutative, z its neutral element, xs not itself a partial reduction and of the program's
/// parameters only (a reduction at host level, not one per element of a map); each of the `s`
/// work-items of a group reduces `e` elements, `e` the largest divisor of `len(xs)/s` not above
/// `items` and below `len(xs)/s` (a known length), or `items` (a symbolic one, checked at run time).
struct WgPartial {
    s: i64,
    items: i64,
}

impl Applier<Lift, LiftAnalysis> for WgPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        if !neutral_of(fd, zd) || xd.partial != 0 || !xd.free.iter().all(|v| an.params.contains(v)) {
            return vec![];
        }
        let Some(n) = xd.len.clone() else { return vec![] };
        let s = self.s;
        let e = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) if n % s == 0 => (2..=self.items.min(n / s / 2)).rev().find(|d| (n / s) % d == 0),
            Ok(_) => None,
            Err(_) => may_split(&n, s * self.items, &an.sizes, &an.declared).then_some(self.items),
        };
        let Some(e) = e else { return vec![] };
        let chunk = s * e;
        let c = Symbol::from(format!("wg_chunk{}_{s}x{e}", usize::from(eclass)));
        let data = Data {
            len: Some(ArithExpr::cst(chunk)),
            flags: xd.flags & FLOAT_ELEMS,
            free: vec![c],
            ..Data::default()
        };
        eg.analysis.leaves.insert(c, LeafInfo { data });
        let cv = eg.add(Lift::Sym(c));
        let sn = eg.add(Lift::Num(s));
        let wg = eg.add(Lift::WgReduce([sn, f, z, cv]));
        let lam = eg.add(Lift::Lam([cv, wg]));
        let k = eg.add(Lift::Num(chunk));
        let split = eg.add(Lift::Split([k, x]));
        let partials = eg.add(Lift::Map([lam, split]));
        let joined = eg.add(Lift::Join(partials));
        let res = eg.add(Lift::Reduce([f, z, joined]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

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

/// Whether `z` is the neutral element of the associative operator `f` (any `z` for min/max,
/// which are idempotent).
fn neutral_of(f: &Data, z: &Data) -> bool {
    match f.assoc {
        Some(Assoc::Add) => z.lit == Some(0.0),
        Some(Assoc::Mul) => z.lit == Some(1.0),
        Some(Assoc::MinMax) => true,
        None => false,
    }
}

/// Partial reduction over strided chunks: `reduce f z xs` =
/// `reduce f z (join (map (reducef f z) (transpose (split s xs))))`: chunk `i` holds
/// `xs[i], xs[i+s], ...`, so the `s` work-items that reduce the chunks read consecutive
/// elements at every step (coalesced). Needs `f` commutative as well as associative (all the
/// operators we recognise are). `s` is the largest divisor of a known length not above
/// `target`, or `target` itself for a symbolic length (checked at run time).
struct StridedPartial {
    target: i64,
}

impl Applier<Lift, LiftAnalysis> for StridedPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (s[var("?f")], s[var("?z")], s[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        if !neutral_of(fd, zd) || xd.partial >= 2 {
            return vec![];
        }
        let Some(n) = xd.len.clone() else { return vec![] };
        let an = &eg.analysis;
        let chunks = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => (2..=self.target.min(n / 2)).rev().find(|d| n % d == 0),
            Err(_) => may_split(&n, self.target, &an.sizes, &an.declared).then_some(self.target),
        };
        let Some(chunks) = chunks else { return vec![] };
        let k = eg.add(Lift::Num(chunks));
        let split = eg.add(Lift::Split([k, x]));
        let tr = eg.add(Lift::Transpose(split));
        let rf = eg.add(Lift::ReduceF([f, z]));
        let partials = eg.add(Lift::Map([rf, tr]));
        let joined = eg.add(Lift::Join(partials));
        let res = eg.add(Lift::Reduce([f, z, joined]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
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

fn symbol_of(eg: &EG, id: Id) -> Option<Symbol> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Sym(s) => Some(*s),
        _ => None,
    })
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

/// The matrix `m` when the class holds `transpose m`.
fn transposed_of(eg: &EG, id: Id) -> Option<Id> {
    eg[id].nodes.iter().find_map(|n| match n {
        Lift::Transpose(m) => Some(*m),
        Lift::Other(s, kids) if kids.len() == 1 && s.as_str().split('|').next() == Some("transpose") => Some(kids[0]),
        _ => None,
    })
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
            || self.t % crate::lower::ttile_rows(self.t) != 0
            || self.t * crate::lower::ttile_rows(self.t) > self.max_group
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
fn float_tile(d: &Data) -> bool {
    d.flags & TILE != 0 && d.flags & FLOAT_ROWS != 0
}

/// Bytes of local memory one staged tile may take (two are staged per work-group).
pub const STAGE_BYTES: i64 = 16 * 1024;

/// Longest row (bytes, taking 4 per element) that `stage-rows` stages: each work-item's row is
/// its share of the work-group's local memory, which bounds how many work-items a GPU keeps
/// resident. Measured on an H200: k-means' 136-byte rows staged ran in 0.137 ms against 0.200
/// unstaged, md's 512-byte neighbour lists in 0.936 against 0.834 (33 KB per group of 64 leaves
/// an SM about 440 resident work-items of 2048, and md waits on its gathers).
pub const STAGED_ROW_BYTES: i64 = 256;

/// The OpenCL rules that shape work-groups: 2-D work-group tiles and their staging in local
/// memory.
pub fn workgroup_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &t1 in &opts.tile_factors {
        for &t0 in &opts.tile_factors {
            for joined in [true, false] {
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
    for &t in &opts.transpose_tiles {
        rules.push(
            Rewrite::new(
                format!("transpose-tile-{t}"),
                pat("(map (lam ?r (map ?f ?r)) ?x)"),
                TransposeTile {
                    t,
                    max_group: opts.max_group,
                },
            )
            .expect("rule"),
        );
    }
    let default = opts.default_size;
    for &kt in &opts.ktile_factors {
        // A block of dot products of two tiles = the same block accumulated over tiles of
        // length kt, each staged in local memory (map-reduce interchange: the reduction over K
        // moves outside the maps, its accumulator is the block), kt | K.
        rules.push(conditional(
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
        ));
    }
    // map (mapf f) (split t X) = map (mapf f) (stage (split t X)), X rows of 8 to 64
    // elements (one per work-item) whose block of t fits local memory, X not a transpose
    rules.push(conditional(
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
    ));
    // map f R = map f (local R), R a work-group tile of float rows whose copy fits
    rules.push(conditional(
        "stage-local".into(),
        "(map ?f ?x)",
        "(map ?f (local ?x))".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let x = &eg[s[var("?x")]].data;
            let sizes = &eg.analysis.sizes;
            let elems = |e: &Option<ArithExpr>| e.as_ref().map(|e| estimate(e, sizes, default).unwrap_or(default));
            float_tile(x) && matches!((elems(&x.len), elems(&x.inner)), (Some(a), Some(b)) if a * b * 4 <= STAGE_BYTES)
        },
    ));
    rules.extend(reuse_rules(opts));
    for &c in &opts.reg_blocks {
        rules.push(
            Rewrite::new(
                format!("reg-block-{}", c.name()),
                pat("(map (lam ?r (join (map ?g ?c))) ?x)"),
                RegBlock {
                    c,
                    max_group: opts.max_group,
                    rows: false,
                },
            )
            .expect("rule"),
        );
    }
    rules.push(stage_rows_vec(default));
    rules.extend(reg_block_rows_rules(opts));
    rules.extend(batch_reg_block_rules(opts));
    rules
}

/// map (mapf f) (split t X) = map (mapf f) (stagev (split t X)), X rows of floats as in
/// `stage-rows`, 4 | t (so each block of t rows of L floats is whole float4s, starting at a
/// multiple of 16 bytes): the block is copied as float4 without the padding of `stage`'s rows,
/// whose index for a run-time row length divides each copied element's position by it; rows
/// of an even length then share banks when read (2 work-items a bank for L = 34). Measured on
/// an H200: k-means' rows staged so ran in 0.0902 ms, padded by `stage` in 0.1068.
fn stage_rows_vec(default: i64) -> Rewrite<Lift, LiftAnalysis> {
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
    /// Lanes of the vectors in which the local tiles are read (`lower.rs`): `float4`, the
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

    fn valid(self) -> bool {
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

/// Register-blocked matrix product:
/// `map (λr. join (map g ys)) x` = `rblock c r g x ys`
/// when `g = λc. reduce f z (map h (zip r c))` is a dot product (`DOT_FN`), `x` and `ys` are
/// matrices of floats, `tm` divides the rows of `x`, `tk` its rows' length (that of the rows
/// of `ys`), `tn` the rows of `ys`, a work-group of one work-item per `rm × rn` block of a
/// `tm × tn` tile fits `Options::max_group`, and the sizes fit the vectors of the lowering
/// (`RegBlockSizes::valid`: `tk` and `rn` multiples of `VEC`). `ys` is usually `transpose m` (`m` the right
/// operand, whose rows the work-groups then copy along); any matrix of floats is sound.
struct RegBlock {
    c: RegBlockSizes,
    max_group: i64,
    /// The product written without `join` (`reg-block-rows-*`): `RBLOCK_ROWS` in the sizes.
    rows: bool,
}

impl RegBlock {
    /// Whether `map (λr. join? (map g ys)) x` may be register-blocked with these sizes.
    fn admits(&self, eg: &EG, r: Id, g: Id, x: Id, ys: Id) -> bool {
        let (xd, yd) = (&eg[x].data, &eg[ys].data);
        let splits = |e: &Option<ArithExpr>, k: i64| {
            e.as_ref()
                .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
        };
        let rb = self.c;
        // `ys` is one matrix for every row: a stencil's windows of the row (convolution's
        // `slide` of `r`) are not
        if !rb.valid()
            || !not_free_in(eg, r, &[ys])
            || eg[g].data.flags & DOT_FN == 0
            || xd.flags & FLOAT_ROWS == 0
            || yd.flags & FLOAT_ROWS == 0
            || !splits(&xd.len, rb.tm)
            || !splits(&xd.inner, rb.tk)
            || !splits(&yd.len, rb.tn)
            || rb.items() > self.max_group
        {
            return false;
        }
        true
    }
}

impl Applier<Lift, LiftAnalysis> for RegBlock {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (r, g, ys, x) = (s[var("?r")], s[var("?g")], s[var("?c")], s[var("?x")]);
        if !self.admits(eg, r, g, x, ys) {
            return vec![];
        }
        let flags = if self.rows { RBLOCK_ROWS } else { 0 };
        let cfg = eg.add(Lift::Num(self.c.pack() | flags));
        let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// The value of a length with the known sizes, other size variables taken as `default`.
pub fn estimate(e: &ArithExpr, sizes: &BTreeMap<String, i64>, default: i64) -> Option<i64> {
    e.eval(&|n| Some(sizes.get(n).copied().unwrap_or(default))).ok()
}

/// Longest loop `unroll-reduce` unrolls.
pub const MAX_UNROLL: i64 = 16;

/// The OpenCL rules for sequential code: `map (reducef f z) xs` = `map (reducefu f z) xs`
/// when the chunks of `xs` have a known length of at most `MAX_UNROLL` (`reduceSeqUnroll`).
pub fn sequential_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let default = opts.default_size;
    vec![conditional(
        "unroll-reduce".into(),
        "(map (reducef ?f ?z) ?x)",
        "(map (reducefu ?f ?z) ?x)".into(),
        move |eg: &mut EG, _: Id, s: &Subst| {
            let x = &eg[s[var("?x")]].data;
            let sizes = &eg.analysis.sizes;
            x.inner
                .as_ref()
                .and_then(|m| estimate(m, sizes, default))
                .is_some_and(|m| (2..=MAX_UNROLL).contains(&m))
        },
    )]
}

/// Count of pattern matches (used in tests).
pub fn count_matches(eg: &EG, pat: &str) -> usize {
    let p: Pattern<Lift> = pat.parse().expect("pattern");
    p.search(eg).iter().map(|m| m.substs.len()).sum()
}

/// Column-block partial reduction (Lift's `partialReduceWithReorder` across the rows of a
/// matrix, as CLBlast's transposed matrix-vector kernels do):
/// `map (λc. … reduce f z X(c) …) xs` = `colreduce bc r g (λc. … reduce f z X(c) …) xs`, where
/// `xs` is `transpose m` (or a zip holding it), so `c` is a column of the stored row-major `m`;
/// the body computes exactly one reduction itself (through `let`s, maps' arguments and joins),
/// over an array `X(c)` of the column's length (made from the column; any other array of that
/// length is reduced the same way all the same); `f` associative and commutative with neutral
/// `z` (the chunks are reduced out of order); `bc | len xs`, `r·g | len X`; and the map is at
/// host level (it mentions no function's parameter: the lowering makes a kernel of it).
/// Lowered to work-groups of `bc × r` work-items, `g` per block of `bc` columns: work-item
/// `(j, i)` of group `k` reduces `X(c_j)[k + g·i], X(c_j)[k + g·(i + r)], …` (consecutive
/// work-items read consecutive addresses of a row of `m`), the `r` partial results of a column
/// meet in local memory and the first row of work-items reduces them and runs the rest of the
/// body (for `g > 1` a second kernel reduces the groups' results and runs it). Without it, one
/// work-item per column reads its whole column: coalesced, but too few work-items to keep the
/// memory busy.
struct ColReduceRule {
    bc: i64,
    r: i64,
    g: i64,
}

/// The matrix whose columns are the rows of `xs`: `transpose m`, or `zip` holding one.
fn column_matrix(eg: &EG, xs: Id) -> Option<Id> {
    transposed_of(eg, xs).or_else(|| {
        eg[xs].nodes.iter().find_map(|n| match n {
            Lift::Other(s, kids) if s.as_str().split('|').next() == Some("zip") => {
                kids.iter().find_map(|k| transposed_of(eg, *k))
            }
            _ => None,
        })
    })
}

/// The variables some `lam` of the e-graph binds: a term mentioning one is inside a function.
fn lam_params(eg: &EG) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = eg
        .classes()
        .flat_map(|c| c.nodes.iter())
        .filter_map(|n| match n {
            Lift::Lam([x, _]) => symbol_of(eg, *x),
            _ => None,
        })
        .collect();
    out.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    out.dedup();
    out
}

/// The reductions a function body computes at its own level (through `let`s, the array
/// arguments of maps and other primitives, joins; not inside functions): each class with its
/// `reduce f z x` nodes.
fn body_reductions(eg: &EG, class: Id, seen: &mut Vec<Id>, found: &mut Vec<(Id, [Id; 3])>) {
    let class = eg.find(class);
    if seen.contains(&class) || seen.len() > 64 {
        return;
    }
    seen.push(class);
    for node in &eg[class].nodes {
        match node {
            Lift::Reduce(kids) => found.push((class, *kids)),
            Lift::Let([_, v, b]) => {
                body_reductions(eg, *v, seen, found);
                body_reductions(eg, *b, seen, found);
            }
            Lift::Map([_, x]) | Lift::Join(x) => body_reductions(eg, *x, seen, found),
            Lift::Other(_, kids) => {
                for k in kids {
                    body_reductions(eg, *k, seen, found);
                }
            }
            // a work-group reduction is a reduction too
            Lift::WgReduce([_, f, z, x]) => found.push((class, [*f, *z, *x])),
            Lift::GridReduce([_, _, f, z, x]) => found.push((class, [*f, *z, *x])),
            Lift::Split(_)
            | Lift::AsVector(_)
            | Lift::AsScalar(_)
            | Lift::Lam(_)
            | Lift::MapF(_)
            | Lift::ReduceF(_)
            | Lift::ReduceFU(_)
            | Lift::Comp(_)
            | Lift::Transpose(_)
            | Lift::Local(_)
            | Lift::KTile(_)
            | Lift::TTile(_)
            | Lift::Stage(_)
            | Lift::StageVec(_)
            | Lift::Tiles(_)
            | Lift::RBlock(_)
            | Lift::ColReduce(_)
            | Lift::Num(_)
            | Lift::Sym(_) => {}
        }
    }
}

impl Applier<Lift, LiftAnalysis> for ColReduceRule {
    fn apply_one(&self, eg: &mut EG, eclass: Id, s: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (c, b, xs) = (s[var("?c")], s[var("?b")], s[var("?xs")]);
        if symbol_of(eg, c).is_none() {
            return vec![];
        }
        let Some(m) = column_matrix(eg, xs) else { return vec![] };
        let Some(col_len) = eg[m].data.len.clone() else {
            return vec![];
        };
        let an = &eg.analysis;
        let splits =
            |len: &Option<ArithExpr>, k: i64| len.as_ref().is_some_and(|n| may_split(n, k, &an.sizes, &an.declared));
        if !splits(&eg[xs].data.len, self.bc) || !splits(&Some(col_len.clone()), self.r * self.g) {
            return vec![];
        }
        let params = lam_params(eg);
        if eg[eclass].data.free.iter().any(|v| params.contains(v)) {
            return vec![];
        }
        // one reduction, whatever its operator: the rule splits only that one
        let mut found = vec![];
        body_reductions(eg, b, &mut vec![], &mut found);
        let mut classes: Vec<Id> = found.iter().map(|(class, _)| *class).collect();
        classes.sort();
        classes.dedup();
        let along_column = found.iter().any(|(_, [f, z, x])| {
            let (fd, zd, xd) = (&eg[*f].data, &eg[*z].data, &eg[*x].data);
            neutral_of(fd, zd) && xd.partial == 0 && xd.len.as_ref() == Some(&col_len)
        });
        if classes.len() != 1 || !along_column {
            return vec![];
        }
        let f = eg.add(Lift::Lam([c, b]));
        let (bc, r, g) = (
            eg.add(Lift::Num(self.bc)),
            eg.add(Lift::Num(self.r)),
            eg.add(Lift::Num(self.g)),
        );
        let res = eg.add(Lift::ColReduce([bc, r, g, f, xs]));
        if eg.union(eclass, res) {
            vec![res]
        } else {
            vec![]
        }
    }
}

/// `col-reduce-{bc}x{r}-g{g}` for each block of columns, number of row chunks (of a work-group
/// that fits) and number of work-groups per block of columns of the options.
pub fn col_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let mut rules = vec![];
    for &bc in &opts.col_blocks {
        for &r in opts.col_rows.iter().filter(|r| bc * **r <= opts.max_group) {
            for &g in &opts.col_groups {
                // map (lam c b) xs = colreduce bc r g (lam c b) xs, xs columns of a stored
                // matrix, b one reduction of an associative f from its neutral element over an
                // array of the columns' length, bc | len xs, r·g | column length, host level
                rules.push(
                    Rewrite::new(
                        format!("col-reduce-{bc}x{r}-g{g}"),
                        pat("(map (lam ?c ?b) ?xs)"),
                        ColReduceRule { bc, r, g },
                    )
                    .expect("rule"),
                );
            }
        }
    }
    rules
}

/// The whole-array reductions in one launch (issue 11.1): `grid-reduce-{g}x{s}` for each number
/// of work-groups `g` of `Options::grid_groups`, `s` the largest work-group size.
pub fn grid_reduce_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let Some(s) = opts
        .wg_sizes
        .iter()
        .copied()
        .filter(|s| s.count_ones() == 1 && *s <= opts.max_group)
        .max()
    else {
        return vec![];
    };
    opts.grid_groups
        .iter()
        .filter(|g| **g > 0)
        .map(|&g| {
            // reduce f z xs = gridreduce g s f z xs, f associative and commutative, z its
            // neutral element, xs a parameter of floats (read a grid of g·s apart, padded with z
            // up to a multiple of g·s, so any length) or a dot product `map h (zip p q)` of
            // parameters of floats (`h` a product of two components: padded with zeros) or
            // `map h ys` of such a parameter or zip (`h` opaque: applied to the elements read
            // only, never to the padding), and longer than two elements a work-item where its
            // length is known
            Rewrite::new(
                format!("grid-reduce-{g}x{s}"),
                pat("(reduce ?f ?z ?x)"),
                GridPartial { g, s },
            )
            .expect("rule")
        })
        .collect()
}

/// See `grid-reduce-*`.
struct GridPartial {
    g: i64,
    s: i64,
}

impl Applier<Lift, LiftAnalysis> for GridPartial {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        // a parameter of floats, padded with z; or `map h (zip p q …)` of such parameters with
        // `h` a product of two components and `f` a sum, the parameters padded with zeros
        let float_param =
            |id: Id| symbol_of(eg, id).is_some_and(|p| an.params.contains(&p)) && eg[id].data.flags & FLOAT_ELEMS != 0;
        let products = fd.assoc == Some(Assoc::Add)
            && eg[x].nodes.iter().any(|n| match n {
                Lift::Map([h, zs]) => {
                    eg[*h].data.flags & ZERO_PRODUCT != 0
                        && eg[*zs].nodes.iter().any(|z| match z {
                            Lift::Other(head, kids) => {
                                head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k))
                            }
                            _ => false,
                        })
                }
                _ => false,
            });
        // `map h ys`, `h` an opaque function of one element and `ys` a parameter of floats or
        // a zip of such: lowered with the padding lanes marked, `h` applied to elements only
        let zip_of_params = |id: Id| {
            eg[id].nodes.iter().any(|z| match z {
                Lift::Other(head, kids) => head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k)),
                _ => false,
            })
        };
        let mapped = eg[x].nodes.iter().any(|n| match n {
            Lift::Map([h, ys]) => {
                symbol_of(eg, *h).is_some_and(|h| h.as_str().starts_with('@'))
                    && (float_param(*ys) || zip_of_params(*ys))
            }
            _ => false,
        });
        let param = float_param(x) || products || mapped;
        let Some(n) = xd.len.clone() else { return vec![] };
        let long = match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => n >= 2 * self.g * self.s,
            Err(_) => n.free_vars().iter().all(|v| an.declared.contains(v)),
        };
        if !neutral_of(fd, zd) || xd.partial != 0 || !param || !long {
            return vec![];
        }
        let gn = eg.add(Lift::Num(self.g));
        let sn = eg.add(Lift::Num(self.s));
        let grid = eg.add(Lift::GridReduce([gn, sn, f, z, x]));
        if eg.union(eclass, grid) {
            vec![grid]
        } else {
            vec![]
        }
    }
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

/// Set in an `rblock`'s packed sizes (above `RegBlockSizes::pack`'s fields) when the product is
/// written without `join`: `rblock c r g x ys` is then `map (λr. map g ys) x`, each element of
/// a row the one-element array that `g`'s reduction returns (`reg-block-rows-*`).
pub const RBLOCK_ROWS: i64 = 1 << 56;

/// The register-blocked product of the form a user writes without `join` (`bench/indep/
/// mm_nt.lisp`, `C = A Bᵀ` dotting rows of `A` with rows of `Bt`; or `map g (transpose b)`):
/// `reg-block-rows-{sizes}` for each setting of `Options::reg_blocks`, lowered as `reg-block-*`'s
/// product whose result is read back as rows of one-element arrays (a view, no copy).
pub fn reg_block_rows_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.reg_blocks
        .iter()
        .map(|&c| {
            // map (λr. map g ys) x = rblock (c | ROWS) r g x ys, g = λc. reduce f z (map h (zip r
            // c)) a dot product, x and ys matrices of floats, tm | rows of x, tk | K, tn | rows
            // of ys, a tile's work-items fit a work-group (as `reg-block-*`)
            Rewrite::new(
                format!("reg-block-rows-{}", c.name()),
                pat("(map (lam ?r (map ?g ?c)) ?x)"),
                RegBlock {
                    c,
                    max_group: opts.max_group,
                    rows: true,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// The cooperative row reductions of lengths that the work-group does not divide (rows of
/// 1000, `bench/indep/rownorm.lisp`, `bench/indep/gemv_bias.lisp`): `wg-reduce-pad-{s}` for
/// each work-group size `s` of `Options::wg_sizes`. Lowering pads the row at its end
/// (`Lowerer::wg_tree_padded`): with zeros before the product of a dot product, with the
/// neutral `z` for a plain array, and otherwise with marked lanes that skip the mapped
/// function.
pub fn wg_reduce_pad_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.wg_sizes
        .iter()
        .filter(|s| s.count_ones() == 1 && **s <= opts.max_group)
        .map(|&s| {
            // map (λr. … reduce f z xs …) rows = map (λr. … wgreduce s f z xs …) rows, as
            // `wg-reduce-{s}` but for len(xs) = n known, s ∤ n and n > s (the rows padded to
            // ⌈n/s⌉·s), rows not columns of an array
            Rewrite::new(
                format!("wg-reduce-pad-{s}"),
                pat("(map (lam ?r ?b) ?rows)"),
                WgRows { s, pad: true },
            )
            .expect("rule")
        })
        .collect()
}

/// Whether `reduce f z x` may be a work-group reduction by `s` work-items over `x` padded:
/// `z` neutral for `f`, `x` not a partial reduction, its length known from the sizes given,
/// longer than `s` and not a multiple of it.
fn wg_padded(eg: &EG, f: Id, z: Id, x: Id, s: i64) -> bool {
    let (f, z, x) = (&eg[f].data, &eg[z].data, &eg[x].data);
    let an = &eg.analysis;
    neutral_of(f, z)
        && x.partial == 0
        && x.len.as_ref().is_some_and(|n| {
            n.free_vars().iter().all(|v| an.declared.contains(v))
                && n.eval(&|v| an.sizes.get(v).copied()).is_ok_and(|n| n > s && n % s != 0)
        })
}

/// `gridreduce`'s number of groups carries, shifted left by this, the width of the vectors its
/// work-items read (`grid-reduce-v*`); 0 (or 1) for scalars.
pub const GRID_LANES_SHIFT: u32 = 40;

/// Vector widths of `grid-reduce-v{w}-*`.
const GRID_LANES: [i64; 1] = [4];

/// The whole-array reductions in one launch reading vectors (`dot`: two inputs, so half the
/// loads in flight a scalar one has for the same bytes): `grid-reduce-v{w}-{g}x{s}` for each
/// `g` of `Options::grid_groups`, `s` the largest work-group size, as `grid-reduce-*`.
pub fn grid_reduce_lanes_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    let Some(s) = opts
        .wg_sizes
        .iter()
        .copied()
        .filter(|s| s.count_ones() == 1 && *s <= opts.max_group)
        .max()
    else {
        return vec![];
    };
    GRID_LANES
        .iter()
        .flat_map(|&w| opts.grid_groups.iter().filter(|g| **g > 0).map(move |&g| (w, g)))
        .map(|(w, g)| {
            // reduce f z xs = gridreduce (g | w << GRID_LANES_SHIFT) s f z xs, f a sum, z its
            // neutral element, xs a parameter of floats or a dot product `map h (zip p q)` of
            // such (h a product of two components), len(xs) known from the sizes given, a
            // multiple of w and ≥ 2·g·s·w: read as w-lane vectors
            Rewrite::new(
                format!("grid-reduce-v{w}-{g}x{s}"),
                pat("(reduce ?f ?z ?x)"),
                GridLanes { g, s, w },
            )
            .expect("rule")
        })
        .collect()
}

/// See `grid-reduce-v*`.
struct GridLanes {
    g: i64,
    s: i64,
    w: i64,
}

impl Applier<Lift, LiftAnalysis> for GridLanes {
    fn apply_one(&self, eg: &mut EG, eclass: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (f, z, x) = (sub[var("?f")], sub[var("?z")], sub[var("?x")]);
        let (fd, zd, xd) = (&eg[f].data, &eg[z].data, &eg[x].data);
        let an = &eg.analysis;
        let float_param =
            |id: Id| symbol_of(eg, id).is_some_and(|p| an.params.contains(&p)) && eg[id].data.flags & FLOAT_ELEMS != 0;
        let zip_of_params = |id: Id| {
            eg[id].nodes.iter().any(|n| match n {
                Lift::Other(head, kids) => head.as_str().starts_with("zip|") && kids.iter().all(|k| float_param(*k)),
                _ => false,
            })
        };
        let products = eg[x].nodes.iter().any(|n| match n {
            Lift::Map([h, zs]) => eg[*h].data.flags & ZERO_PRODUCT != 0 && zip_of_params(*zs),
            _ => false,
        });
        let Some(n) = xd.len.clone() else { return vec![] };
        // a length known only at run time may not be whole vectors: reading its last
        // elements one at a time would make every read a per-lane one
        let whole = n.free_vars().iter().all(|v| an.declared.contains(v))
            && n.eval(&|v| an.sizes.get(v).copied())
                .is_ok_and(|n| n % self.w == 0 && n >= 2 * self.g * self.s * self.w);
        if fd.assoc != Some(Assoc::Add)
            || !neutral_of(fd, zd)
            || xd.partial != 0
            || !(float_param(x) || products)
            || !whole
        {
            return vec![];
        }
        let gn = eg.add(Lift::Num(self.g | self.w << GRID_LANES_SHIFT));
        let sn = eg.add(Lift::Num(self.s));
        let grid = eg.add(Lift::GridReduce([gn, sn, f, z, x]));
        if eg.union(eclass, grid) {
            vec![grid]
        } else {
            vec![]
        }
    }
}

/// Set in an `rblock`'s packed sizes (beside `RBLOCK_ROWS`) when the product is the body of a
/// map over a batch, `map (λab. rblock c r g x ys) xs` with `x` and `ys` read from `ab`
/// (`batch-reg-block-*`): lowered with the batch as the third dimension of the grid, each
/// element's tiles a `mapWrg1 × mapWrg0` inside `mapWrg2`. The flag changes no meaning.
pub const RBLOCK_BATCH: i64 = 1 << 57;

/// The register-blocked product under a map over a batch of matrix pairs
/// (`bench/indep/bmm.lisp`: `map (λab. map (λrow. map (λcol. dot row col) (transpose (get 1
/// ab))) (get 0 ab)) (zip as bs)`): `batch-reg-block-{sizes}` for each setting of
/// `Options::batch_blocks`, tiles that fit the small products of a batch (a 32 × 32 product
/// is one tile of one work-group), where `reg-block-*`'s tiles of 64 and 128 do not.
pub fn batch_reg_block_rules(opts: &crate::Options) -> Vec<Rewrite<Lift, LiftAnalysis>> {
    opts.batch_blocks
        .iter()
        .map(|&c| {
            // map (λab. P) xs = map (λab. rblock (c | BATCH) r g x ys) xs, P one of
            // `map (λr. join (map g ys)) x`, `map (λr. map g ys) x` or `map (λr. let k ys (map g
            // k)) x` (the reader binds `transpose (get 1 ab)` so), with `reg-block-*`'s side
            // conditions (g a dot product, x and ys matrices of floats, tm | rows of x, tk | K,
            // tn | rows of ys, a tile's work-items fit a work-group), r not free in ys, and x,
            // ys reading no variable but ab and the parameters (the batch map is lowered at
            // host level, ab its only binder), and x, ys views of ab, no computation
            // (`view_of_leaves`: a computed operand would be a kernel of its own inside the
            // batch's work-group, which `validate` refuses)
            Rewrite::new(
                format!("batch-reg-block-{}", c.name()),
                pat("(map (lam ?ab ?b) ?xs)"),
                BatchRegBlock {
                    c,
                    max_group: opts.max_group,
                },
            )
            .expect("rule")
        })
        .collect()
}

/// See `batch-reg-block-*`.
struct BatchRegBlock {
    c: RegBlockSizes,
    max_group: i64,
}

/// The maps `(f, xs)` that an e-class holds: `map f xs`, or `let k xs (map f k)` (the reader's
/// binding of a component, `get #0 ab`), `k` not free in `f`.
fn maps_in(eg: &EG, class: Id) -> Vec<(Id, Id)> {
    let mut found = vec![];
    for n in &eg[class].nodes {
        match n {
            Lift::Map([f, x]) => found.push((*f, *x)),
            Lift::Let([k, v, m]) => {
                let Some(ks) = symbol_of(eg, *k) else { continue };
                for mn in &eg[*m].nodes {
                    if let Lift::Map([f, c]) = mn {
                        if symbol_of(eg, *c) == Some(ks) && not_free_in(eg, *k, &[*f]) {
                            found.push((*f, *v));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The matrix products `(r, g, x, ys, rows)` that an e-class holds as one of the forms
/// `batch-reg-block-*` names (each map possibly over a `let`-bound array, `maps_in`), `rows`
/// when written without `join`.
fn products_in(eg: &EG, class: Id) -> Vec<(Id, Id, Id, Id, bool)> {
    let mut found = vec![];
    for (f, x) in maps_in(eg, class) {
        for fnode in &eg[f].nodes {
            let Lift::Lam([r, body]) = fnode else { continue };
            for (g, ys) in maps_in(eg, *body) {
                found.push((*r, g, x, ys, true));
            }
            for b in &eg[*body].nodes {
                if let Lift::Join(m) = b {
                    for (g, ys) in maps_in(eg, *m) {
                        found.push((*r, g, x, ys, false));
                    }
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Whether `k` divides the length `len`, equal to it included (a batch element's product may
/// be one tile): known from the sizes given, or symbolic as `may_split` allows.
fn tiles_exactly(len: &Option<ArithExpr>, k: i64, an: &LiftAnalysis) -> bool {
    len.as_ref()
        .is_some_and(|n| match n.eval(&|v| an.sizes.get(v).copied()) {
            Ok(n) => n >= k && n % k == 0,
            Err(_) => may_split(n, k, &an.sizes, &an.declared),
        })
}

impl BatchRegBlock {
    /// `RegBlock::admits`, with tiles as long as the matrices allowed.
    fn admits(&self, eg: &EG, r: Id, g: Id, x: Id, ys: Id) -> bool {
        let (xd, yd, an) = (&eg[x].data, &eg[ys].data, &eg.analysis);
        let rb = self.c;
        rb.valid()
            && not_free_in(eg, r, &[ys])
            && eg[g].data.flags & DOT_FN != 0
            && xd.flags & FLOAT_ROWS != 0
            && yd.flags & FLOAT_ROWS != 0
            && tiles_exactly(&xd.len, rb.tm, an)
            && tiles_exactly(&xd.inner, rb.tk, an)
            && tiles_exactly(&yd.len, rb.tn, an)
            && rb.items() <= self.max_group
    }
}

impl Applier<Lift, LiftAnalysis> for BatchRegBlock {
    fn apply_one(&self, eg: &mut EG, _: Id, sub: &Subst, _: Option<&PatternAst<Lift>>, _: Symbol) -> Vec<Id> {
        let (ab, body) = (sub[var("?ab")], sub[var("?b")]);
        let Some(abs) = symbol_of(eg, ab) else { return vec![] };
        let reads_batch_only = |eg: &EG, id: Id| {
            eg[id]
                .data
                .free
                .iter()
                .all(|v| *v == abs || eg.analysis.params.contains(v))
        };
        let mut out = vec![];
        for (r, g, x, ys, rows) in products_in(eg, body) {
            if !self.admits(eg, r, g, x, ys)
                || !reads_batch_only(eg, x)
                || !reads_batch_only(eg, ys)
                || !view_of_leaves(eg, x, &mut vec![])
                || !view_of_leaves(eg, ys, &mut vec![])
            {
                continue;
            }
            let flags = RBLOCK_BATCH | if rows { RBLOCK_ROWS } else { 0 };
            let cfg = eg.add(Lift::Num(self.c.pack() | flags));
            let res = eg.add(Lift::RBlock([cfg, r, g, x, ys]));
            if eg.union(body, res) {
                out.push(res);
            }
        }
        out
    }
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

/// Whether e-class `id` holds an array that only re-indexes leaves (variables and the
/// encoder's opaque leaves, `get #0 ab`): transposes, splits, joins, vector views, `let`s of
/// such, the layout heads of `Other` (`zip`, `slide`, `pad`, ...), and maps of a function that
/// only re-indexes its parameter, as `Lowerer::computes` reads them. `visiting` holds the
/// classes on the path, so a cycle (`join (split k x)` in the class of `x`) is not followed.
fn view_of_leaves(eg: &EG, id: Id, visiting: &mut Vec<Id>) -> bool {
    let id = eg.find(id);
    if visiting.contains(&id) {
        return false;
    }
    visiting.push(id);
    let view = eg[id].nodes.iter().any(|n| match n {
        Lift::Sym(_) => true,
        Lift::Transpose(a) | Lift::Join(a) | Lift::AsScalar(a) | Lift::Split([_, a]) | Lift::AsVector([_, a]) => {
            view_of_leaves(eg, *a, visiting)
        }
        Lift::Let([_, v, b]) => view_of_leaves(eg, *v, visiting) && view_of_leaves(eg, *b, visiting),
        Lift::Other(head, kids) => {
            LAYOUT_HEADS.contains(&head.as_str().split('|').next().unwrap_or(""))
                && kids.iter().all(|k| view_of_leaves(eg, *k, visiting))
        }
        Lift::Map([f, x]) => reindexes(eg, *f, visiting) && view_of_leaves(eg, *x, visiting),
        _ => false,
    });
    visiting.pop();
    view
}

/// Heads of `Other` nodes that only re-index their arguments (`Lowerer::computes`'s).
const LAYOUT_HEADS: [&str; 7] = [
    "zip",
    "transpose",
    "slide",
    "pad",
    "pad-clamp",
    "reorder-stride",
    "reverse",
];

/// Whether e-class `f` holds `λp. b` with `b` the parameter `p` under re-indexings only.
fn reindexes(eg: &EG, f: Id, visiting: &mut Vec<Id>) -> bool {
    fn chain(eg: &EG, t: Id, p: Symbol, visiting: &mut Vec<Id>) -> bool {
        let t = eg.find(t);
        if visiting.contains(&t) {
            return false;
        }
        visiting.push(t);
        let ok = eg[t].nodes.iter().any(|n| match n {
            Lift::Sym(s) => *s == p,
            Lift::Transpose(a) | Lift::Join(a) | Lift::Split([_, a]) => chain(eg, *a, p, visiting),
            Lift::Other(head, kids) => {
                matches!(
                    head.as_str().split('|').next(),
                    Some("transpose" | "slide" | "pad-clamp")
                ) && kids.len() == 1
                    && chain(eg, kids[0], p, visiting)
            }
            _ => false,
        });
        visiting.pop();
        ok
    }
    eg[f].nodes.iter().any(|n| match n {
        Lift::Lam([p, b]) => symbol_of(eg, *p).is_some_and(|p| chain(eg, *b, p, visiting)),
        _ => false,
    })
}
