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
use egg::{define_language, Analysis, DidMerge, EGraph, Id, Pattern, Rewrite, Searcher, Subst, Symbol, Var};
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
        "comp" = Comp([Id; 2]),
        "let" = Let([Id; 3]),
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

    fn make(egraph: &mut EG, enode: &Lift, _id: Id) -> Data {
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
                Data {
                    len: x.len,
                    inner,
                    flags,
                    ..Data::default()
                }
            }
            Lift::Reduce([_, _, x]) => Data {
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
                    ..Data::default()
                }
            }
            Lift::Join(x) => {
                let x = d(x);
                let len = match (&x.len, &x.inner) {
                    (Some(n), Some(m)) => Some(n.mul(m)),
                    _ => None,
                };
                let flags = if x.flags & MAP_REDUCEF != 0 { PARTIAL } else { 0 };
                Data {
                    len,
                    flags,
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
            Lift::Lam([_, body]) => Data {
                ret: d(body).len.map(Ret::Const).unwrap_or_default(),
                ..Data::default()
            },
            Lift::MapF(f) => Data {
                ret: Ret::Same,
                flags: HAS_MAPF | (d(f).flags & REDUCEF),
                ..Data::default()
            },
            Lift::ReduceF(_) => Data {
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
        }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
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
        DidMerge(ca, cb)
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
    for &k in &opts.split_factors {
        // reduce f z xs = reduce f z (join (map (reducef f z) (split k xs))), f associative,
        // z its neutral element (any z for min/max), k | len(xs)
        rules.push(conditional(
            format!("partial-reduce-{k}"),
            "(reduce ?f ?z ?x)",
            format!("(reduce ?f ?z (join (map (reducef ?f ?z) (split {k} ?x))))"),
            move |eg: &mut EG, _: Id, s: &Subst| {
                let (f, z, x) = (&eg[s[var("?f")]].data, &eg[s[var("?z")]].data, &eg[s[var("?x")]].data);
                let neutral = match f.assoc {
                    Some(Assoc::Add) => z.lit == Some(0.0),
                    Some(Assoc::Mul) => z.lit == Some(1.0),
                    Some(Assoc::MinMax) => true,
                    None => false,
                };
                neutral
                    && x.flags & PARTIAL == 0
                    && x.len
                        .as_ref()
                        .is_some_and(|n| may_split(n, k, &eg.analysis.sizes, &eg.analysis.declared))
            },
        ));
    }
    rules
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

/// Count of pattern matches (used in tests).
pub fn count_matches(eg: &EG, pat: &str) -> usize {
    let p: Pattern<Lift> = pat.parse().expect("pattern");
    p.search(eg).iter().map(|m| m.substs.len()).sum()
}
