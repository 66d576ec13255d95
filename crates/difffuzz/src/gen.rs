//! A type-directed generator of random LIFT programs, written as text (the language is the
//! contract, so a program here is exactly what a user could write).
//!
//! Arrays are built forwards: start from a parameter (or `generate`) and apply layout
//! primitives whose result type follows from the argument's. Scalars, tuples and vectors are
//! built backwards: pick the wanted type, then an operator that produces it, and recurse. Array
//! lengths are carried symbolically (the text the type checker will see) next to their value for
//! this case's data, and two arrays are combined (zip) only when their length texts are equal,
//! so that programs are well typed by construction. A small share of programs deliberately
//! breaks the placement rules or divisibility, because refusing those cleanly is part of what
//! the compiler must do.

use ir::rng::XorShift;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;

mod vectors;

use vectors::flat_division;
pub use vectors::Lane;

/// A length: its text in LIFT size syntax and its value for this case's sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Len {
    pub text: String,
    pub val: usize,
}

impl Len {
    fn lit(n: usize) -> Len {
        Len {
            text: n.to_string(),
            val: n,
        }
    }
    /// As an argument where a size is expected: a literal needs `#`.
    fn size_arg(&self) -> String {
        if self.text.parse::<usize>().is_ok() {
            format!("#{}", self.text)
        } else {
            self.text.clone()
        }
    }
    /// Size variable `name` of value `val`.
    fn var(name: &str, val: usize) -> Len {
        Len { text: name.into(), val }
    }
    fn op(op: &str, a: &Len, b: usize, val: usize) -> Len {
        // Lengths made only of literals stay literals, as the type checker folds them too.
        if a.text.parse::<usize>().is_ok() {
            return Len::lit(val);
        }
        Len {
            text: format!("({op} {} {b})", a.text),
            val,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Float,
    Double,
    Int,
    Bool,
    /// A vector of these lanes and this width.
    Vector(Lane, usize),
    Tuple(Vec<Ty>),
    Array(Box<Ty>, Len),
    /// The result of a filter: at most `capacity` elements, known at run time.
    Exists(Box<Ty>, Len),
}

impl Ty {
    fn arr(elem: Ty, len: Len) -> Ty {
        Ty::Array(Box::new(elem), len)
    }
    pub fn is_scalar(&self) -> bool {
        matches!(self, Ty::Float | Ty::Double | Ty::Int | Ty::Bool)
    }
    /// The type as written in a parameter list.
    pub fn lift(&self) -> String {
        match self {
            Ty::Float => "float".into(),
            Ty::Double => "double".into(),
            Ty::Int => "int".into(),
            Ty::Bool => "bool".into(),
            Ty::Vector(l, w) => format!("(vector-type {} {w})", l.ty().lift()),
            Ty::Tuple(ts) => format!("(tuple-type {})", ts.iter().map(Ty::lift).collect::<Vec<_>>().join(" ")),
            Ty::Array(e, n) | Ty::Exists(e, n) => format!("(array-type {} {})", e.lift(), n.text),
        }
    }
    /// Data without an array inside can be an element computed by one work-item.
    fn flat(&self) -> bool {
        match self {
            Ty::Float | Ty::Double | Ty::Int | Ty::Bool | Ty::Vector(..) => true,
            Ty::Tuple(ts) => ts.iter().all(Ty::flat),
            Ty::Array(..) | Ty::Exists(..) => false,
        }
    }
}

/// One generated case: the program text and what is needed to make (and shrink) its data.
#[derive(Clone, Debug)]
pub struct Case {
    pub id: String,
    pub src: String,
    pub params: Vec<(String, Ty)>,
    /// Size variables and their values; the parameter types refer to them by name.
    pub sizes: Vec<(String, usize)>,
    pub data_seed: u64,
    /// Data counting 0, 1, 2, ... instead of random values (what shrinking tries, for repros
    /// that are easy to follow by hand).
    pub plain_data: bool,
}

impl Case {
    /// The input data as a JSON object keyed by parameter name.
    pub fn data(&self) -> Json {
        let mut rng = XorShift::new(self.data_seed);
        let mut count = 0;
        let mut obj = serde_json::Map::new();
        for (name, ty) in &self.params {
            let v = if self.plain_data {
                plain_value(&mut count, ty, &self.sizes)
            } else {
                random_value(&mut rng, ty, &self.sizes)
            };
            obj.insert(name.clone(), v);
        }
        Json::Object(obj)
    }
}

fn length(n: &Len, sizes: &[(String, usize)]) -> usize {
    sizes.iter().find(|(k, _)| *k == n.text).map_or(n.val, |(_, v)| *v)
}

/// 0, 1, 2, ... (modulo 16) in reading order.
fn plain_value(count: &mut usize, ty: &Ty, sizes: &[(String, usize)]) -> Json {
    let mut next = || {
        *count += 1;
        ((*count - 1) % 16) as i64
    };
    match ty {
        Ty::Float | Ty::Double => json!(next() as f64),
        Ty::Int => json!(next()),
        Ty::Bool => json!(next() % 2 == 1),
        Ty::Vector(l, w) => (0..*w).map(|_| plain_value(count, &l.ty(), sizes)).collect(),
        Ty::Tuple(ts) => ts.iter().map(|t| plain_value(count, t, sizes)).collect(),
        Ty::Array(e, n) | Ty::Exists(e, n) => (0..length(n, sizes)).map(|_| plain_value(count, e, sizes)).collect(),
    }
}

/// Values on small grids, so that sums and products of a few of them are exact in float32 and
/// the comparison does not depend on evaluation order.
fn random_value(rng: &mut XorShift, ty: &Ty, sizes: &[(String, usize)]) -> Json {
    match ty {
        Ty::Float | Ty::Double => json!((rng.below(33) as f64 - 16.0) / 4.0),
        Ty::Int => json!(rng.below(17) as i64 - 8),
        Ty::Bool => json!(rng.below(2) == 1),
        Ty::Vector(l, w) => (0..*w).map(|_| random_value(rng, &l.ty(), sizes)).collect(),
        Ty::Tuple(ts) => ts.iter().map(|t| random_value(rng, t, sizes)).collect(),
        Ty::Array(e, n) | Ty::Exists(e, n) => {
            let len = sizes.iter().find(|(k, _)| *k == n.text).map_or(n.val, |(_, v)| *v);
            (0..len).map(|_| random_value(rng, e, sizes)).collect()
        }
    }
}

/// A variable in scope.
#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
}

pub struct Gen {
    rng: XorShift,
    fresh: usize,
    defs: Vec<String>,
    /// Deliberately break a placement rule somewhere in this program.
    unruly: bool,
    /// The step count of host loops given at run time, `K`, once a loop uses it (its value is
    /// the length of an extra parameter, so that the data gives it).
    run_time_steps: Option<usize>,
    /// Only high-level bodies (the variants mode: rewriting needs a high-level program).
    high_level_only: bool,
}

const FLOAT_LITS: &[&str] = &[
    "0.0f", "1.0f", "2.0f", "0.5f", "-1.0f", "0.25f", "-2.0f", "1.5f", "3.0f", "-0.5f",
];
const INT_LITS: &[&str] = &["0", "1", "2", "3", "-1", "-3", "5", "7"];

impl Gen {
    /// The generator of case `index` of run `seed`: each case has its own stream, so a case can
    /// be regenerated alone from its id.
    pub fn case(seed: u64, index: u64) -> Case {
        let mut g = Gen {
            rng: XorShift::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index),
            fresh: 0,
            defs: vec![],
            unruly: false,
            run_time_steps: None,
            high_level_only: false,
        };
        g.unruly = g.chance(6);
        g.program(format!("{seed}:{index}"), seed ^ index.rotate_left(17))
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.rng.below(100) < percent
    }
    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        self.rng.pick(items).clone()
    }
    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn program(&mut self, id: String, data_seed: u64) -> Case {
        // Mostly lengths that every split, slide and vector width here divides; sometimes not,
        // so that the run-time size checks are exercised too.
        let n = if self.chance(8) {
            self.pick(&[5, 6, 7, 12, 20, 36])
        } else {
            self.pick(&[8, 16, 16, 32, 32, 48, 64])
        };
        let m = self.pick(&[4, 8, 8, 16]);
        let mut sizes = vec![("N".to_string(), n)];
        let len_n = Len {
            text: "N".into(),
            val: n,
        };
        let len_m = Len {
            text: "M".into(),
            val: m,
        };
        let mut params: Vec<(String, Ty)> = vec![];
        let first = match self.rng.below(10) {
            0..=4 => Ty::arr(Ty::Float, len_n.clone()),
            5 => Ty::arr(Ty::Int, len_n.clone()),
            6 | 7 => Ty::arr(Ty::arr(Ty::Float, len_m.clone()), len_n.clone()),
            8 if self.chance(35) => Ty::arr(Ty::Tuple(vec![Ty::Vector(Lane::Float, 4), Ty::Float]), len_n.clone()),
            8 => Ty::arr(Ty::Tuple(vec![Ty::Float, Ty::Int]), len_n.clone()),
            _ => {
                let lane = self.lane();
                Ty::arr(Ty::Vector(lane, 4), len_n.clone())
            }
        };
        params.push(("xs".into(), first));
        let extra = self.rng.below(3);
        for k in 0..extra {
            let ty = match self.rng.below(6) {
                0 | 1 => Ty::arr(Ty::Float, len_n.clone()),
                2 => Ty::arr(Ty::Int, len_n.clone()),
                3 => Ty::arr(Ty::Float, len_m.clone()),
                4 if self.chance(20) => Ty::arr(Ty::Double, len_n.clone()),
                4 => Ty::Float,
                _ => Ty::Int,
            };
            params.push((["ys", "zs"][k].to_string(), ty));
        }
        if params.iter().any(|(_, t)| t.lift().contains(" M)")) {
            sizes.push(("M".into(), m));
            sizes.sort();
        }
        let env: Vec<Var> = params
            .iter()
            .map(|(name, ty)| Var {
                name: name.clone(),
                ty: ty.clone(),
            })
            .collect();
        let body = match self.rng.below(10) {
            _ if self.high_level_only => self.high_level(&env),
            0 | 1 => self.high_level(&env),
            _ => self.host(&env, 2),
        };
        if let Some(k) = self.run_time_steps {
            // Only its length matters: `K` is a size of the program that no other data gives.
            params.push((
                "steps".into(),
                Ty::arr(
                    Ty::Int,
                    Len {
                        text: "K".into(),
                        val: k,
                    },
                ),
            ));
            sizes.push(("K".into(), k));
            sizes.sort();
        }
        let mut src = String::new();
        for d in &self.defs {
            src.push_str(d);
            src.push('\n');
        }
        let _ = write!(
            src,
            "(lift\n  ({})\n  ({})\n  (lambda ({})\n    {body}))\n",
            sizes.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(_, t)| t.lift()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" "),
        );
        Case {
            id,
            src,
            params,
            sizes,
            data_seed,
            plain_data: false,
        }
    }

    // ---- arrays, forwards --------------------------------------------------------------------

    /// An array to compute over: an array variable (or `generate`), through up to `steps`
    /// layout primitives.
    fn source(&mut self, env: &[Var], steps: usize) -> (String, Ty) {
        let arrays: Vec<&Var> = env.iter().filter(|v| matches!(v.ty, Ty::Array(..))).collect();
        let (mut e, mut t) = if arrays.is_empty() || self.chance(5) {
            let n = arrays.first().map_or(Len::lit(16), |v| match &v.ty {
                Ty::Array(_, n) => n.clone(),
                _ => Len::lit(16),
            });
            let i = self.name("i");
            let ienv = generate_env(env, &i);
            // computed elements of every type: a vector view of them must take their type
            let et = self.pick(&[Ty::Float, Ty::Float, Ty::Int, Ty::Double]);
            let f = self.scalar(&et, &ienv, 2);
            (
                format!("(generate {} (lambda ({i}) {f}))", n.size_arg()),
                Ty::arr(et, n),
            )
        } else {
            let v = self.pick(&arrays);
            (v.name.clone(), v.ty.clone())
        };
        for _ in 0..self.rng.below(steps + 1) {
            (e, t) = self.layout(env, e, t);
        }
        (e, t)
    }

    /// One layout primitive applied to `e`, or `e` unchanged when none fits.
    fn layout(&mut self, env: &[Var], e: String, t: Ty) -> (String, Ty) {
        let Ty::Array(elem, n) = t.clone() else {
            return (e, t);
        };
        let divisors: Vec<usize> = [2, 4, 8]
            .into_iter()
            .filter(|k| (n.val % k == 0 || self.unruly) && *k <= n.val)
            .collect();
        for _ in 0..6 {
            match self.rng.below(11) {
                0 if !divisors.is_empty() => {
                    let k = self.pick(&divisors);
                    let out = Len::op("/", &n, k, n.val / k);
                    let t = Ty::arr(Ty::arr(*elem, Len::lit(k)), out);
                    if self.chance(15) {
                        // through a definition that takes the size literal
                        let (def, sz, xs) = (self.name("chunks"), self.name("k"), self.name("xs"));
                        self.defs.push(format!("(define ({def} {sz} {xs}) (split {sz} {xs}))"));
                        return (format!("({def} #{k} {e})"), t);
                    }
                    return (format!("(split #{k} {e})"), t);
                }
                1 => {
                    if let Ty::Array(inner, m) = *elem.clone() {
                        let len = if n.text.parse::<usize>().is_ok() && m.text.parse::<usize>().is_ok() {
                            Len::lit(n.val * m.val)
                        } else {
                            Len {
                                text: format!("(* {} {})", n.text, m.text),
                                val: n.val * m.val,
                            }
                        };
                        if m.text.chars().all(|c| c.is_ascii_alphabetic()) && self.chance(30) {
                            // Rows again, by a split whose size is a size variable.
                            let rows = Len {
                                text: format!("(/ {} {})", len.text, m.text),
                                val: n.val,
                            };
                            return (
                                format!("(split {} (join {e}))", m.text),
                                Ty::arr(Ty::arr(*inner, m.clone()), rows),
                            );
                        }
                        return (format!("(join {e})"), Ty::arr(*inner, len));
                    }
                }
                2 => {
                    if let Ty::Array(inner, m) = *elem.clone() {
                        return (format!("(transpose {e})"), Ty::arr(Ty::arr(*inner, n), m));
                    }
                }
                3 | 9 if n.text.starts_with("(* ") && self.chance(60) => {
                    // `split M` of a length `(* A M)`: a split by a size variable.
                    let var = n
                        .text
                        .strip_prefix("(* ")
                        .and_then(|r| r.strip_suffix(')'))
                        .and_then(|r| r.rsplit_once(' '))
                        .map(|(_, b)| b.to_string())
                        .filter(|b| b.chars().all(|c| c.is_ascii_alphabetic()));
                    if let Some(b) = var {
                        let val = n.val / env_size(env, &b).unwrap_or(1).max(1);
                        let inner = Len {
                            text: b.clone(),
                            val: n.val / val.max(1),
                        };
                        let out = Len {
                            text: format!("(/ {} {b})", n.text),
                            val,
                        };
                        return (format!("(split {b} {e})"), Ty::arr(Ty::arr(*elem, inner), out));
                    }
                }
                3 => return (format!("(reverse {e})"), Ty::Array(elem, n)),
                4 if !divisors.is_empty() => {
                    let s = self.pick(&divisors);
                    return (format!("(reorder-stride #{s} {e})"), Ty::Array(elem, n));
                }
                5 if n.val >= 3 => {
                    let (s, step) = self.pick(&[(3, 1), (2, 1), (2, 2), (3, 3), (4, 2)]);
                    if n.val < s || ((n.val - s) % step != 0 && !self.unruly) {
                        continue;
                    }
                    let val = (n.val + step).saturating_sub(s) / step;
                    let text = if n.text.parse::<usize>().is_ok() {
                        val.to_string()
                    } else {
                        format!("(/ (+ (- {} {s}) {step}) {step})", n.text)
                    };
                    return (
                        format!("(slide #{s} #{step} {e})"),
                        Ty::arr(Ty::arr(*elem, Len::lit(s)), Len { text, val }),
                    );
                }
                6 => {
                    let (l, r) = self.pick(&[(1, 1), (0, 2), (2, 0), (1, 3)]);
                    let len = if n.text.parse::<usize>().is_ok() {
                        Len::lit(n.val + l + r)
                    } else {
                        Len {
                            text: format!("(+ {} {})", n.text, l + r),
                            val: n.val + l + r,
                        }
                    };
                    if self.chance(50) {
                        return (format!("(pad-clamp #{l} #{r} {e})"), Ty::Array(elem, len));
                    }
                    if elem.is_scalar() {
                        let v = self.literal(&elem);
                        return (format!("(pad #{l} #{r} {v} {e})"), Ty::Array(elem, len));
                    }
                }
                7 if Lane::of(&elem).is_some() => {
                    let lane = Lane::of(&elem).expect("checked");
                    let w = self.pick(&[4, 4, 2, 3, 8, 16]);
                    if n.val % w == 0 || self.unruly {
                        let out = Len::op("/", &n, w, n.val / w);
                        return (format!("(asVector #{w} {e})"), Ty::arr(Ty::Vector(lane, w), out));
                    }
                }
                8 => {
                    if let Ty::Vector(lane, w) = *elem {
                        let len = Len::op("*", &n, w, n.val * w);
                        return (format!("(asScalar {e})"), Ty::arr(lane.ty(), len));
                    }
                }
                9 | 10 => {
                    // zip with another array of the same length, or with a generated one.
                    let partners: Vec<&Var> = env
                        .iter()
                        .filter(|v| matches!(&v.ty, Ty::Array(_, m) if *m == n) && v.name != e)
                        .collect();
                    let (pe, pt) = if partners.is_empty() || self.chance(30) {
                        // A `generate` of the length as the user would write it: the splits'
                        // nested divisions, or one division by their product, which the
                        // checks of the splits make the same length.
                        let i = self.name("i");
                        let ienv = generate_env(env, &i);
                        let et = self.pick(&[Ty::Int, Ty::Int, Ty::Float]);
                        let f = self.scalar(&et, &ienv, 1);
                        let len = match flat_division(&n.text) {
                            Some(flat) if self.chance(50) => flat,
                            _ => n.size_arg(),
                        };
                        (format!("(generate {len} (lambda ({i}) {f}))"), et)
                    } else {
                        let p = self.pick(&partners);
                        let Ty::Array(pt, _) = &p.ty else {
                            unreachable!("filtered")
                        };
                        (p.name.clone(), (**pt).clone())
                    };
                    let (a, b) = if self.chance(50) {
                        ((e, *elem), (pe, pt))
                    } else {
                        ((pe, pt), (e, *elem))
                    };
                    return (format!("(zip {} {})", a.0, b.0), Ty::arr(Ty::Tuple(vec![a.1, b.1]), n));
                }
                _ => {}
            }
        }
        (e, Ty::Array(elem, n))
    }

    // ---- host level ----------------------------------------------------------------------------

    /// A host-level computation: one or more kernels.
    fn host(&mut self, env: &[Var], depth: usize) -> String {
        let (a, at) = self.source(env, 2);
        let Ty::Array(elem, n) = at.clone() else {
            unreachable!("sources are arrays")
        };
        match self.rng.below(15) {
            // One work-item per element.
            0..=3 => {
                let (f, rt) = self.seq_fn(&elem, env, 3);
                let join = matches!(&rt, Ty::Array(_, l) if l.val == 1 && self.chance(70));
                let g = if self.chance(50) || !rt.flat() {
                    self.wrap_fn_body(&f, "toGlobal")
                } else {
                    f
                };
                let mut out = format!("(mapGlb {g} {a})");
                if rt.flat() && self.chance(60) {
                    out = if self.chance(25) {
                        // The same, as a pipeline of partial applications.
                        format!("(o toGlobal (mapGlb {g}) {a})")
                    } else {
                        format!("(toGlobal {out})")
                    };
                }
                if join {
                    out = format!("(join {out})");
                }
                out
            }
            // Chunks folded by one work-item each.
            4 => {
                let k = self.pick(&[2, 4, 8]);
                let (z, zt) = self.accumulator(&elem);
                let f = self.fold_fn(&zt, &elem, env);
                let red = if self.chance(30) {
                    "reduceSeqUnroll"
                } else {
                    "reduceSeq"
                };
                format!("(join (mapGlb (lambda (c) (toGlobal ({red} {f} {z} c))) (split #{k} {a})))")
            }
            // Two dimensions of work-items.
            5 => match *elem {
                Ty::Array(ref inner, _) => {
                    let (f, rt) = self.seq_fn(inner, env, 2);
                    let g = if rt.flat() {
                        f
                    } else {
                        self.wrap_fn_body(&f, "toGlobal")
                    };
                    let r = self.name("row");
                    let dim = if self.chance(80) { "mapGlb1" } else { "mapGlb2" };
                    format!("(toGlobal ({dim} (lambda ({r}) (mapGlb {g} {r})) {a}))")
                }
                _ => self.host(env, depth),
            },
            // Work-groups.
            6 | 7 => self.work_groups(env, a, &at),
            // The parallel filter.
            8 if elem.flat() || self.chance(30) => {
                let p = self.pred_fn(&elem, env);
                let filtered = format!("(toGlobal (filterGlb {p} {a}))");
                if self.chance(60) && elem.flat() {
                    let ys = self.name("ys");
                    let binder = if self.chance(30) { "unpack" } else { "let" };
                    let mut inner = env.to_vec();
                    inner.push(Var {
                        name: ys.clone(),
                        ty: Ty::Exists(elem.clone(), n.clone()),
                    });
                    let (f, _) = self.seq_fn(&elem, &inner, 2);
                    format!("({binder} {ys} {filtered} (toGlobal (mapGlb {f} {ys})))")
                } else {
                    filtered
                }
            }
            // A kernel boundary: the result of one kernel feeds the next.
            9 if depth > 0 && elem.flat() => {
                let t = self.name("t");
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: (*elem).clone(),
                });
                let rt = self.flat_type(env);
                let v = self.value(&rt, &inner, 2);
                let first = format!("(toGlobal (mapGlb (lambda ({x}) {v}) {a}))");
                let mut env2 = env.to_vec();
                env2.push(Var {
                    name: t.clone(),
                    ty: Ty::arr(rt, n.clone()),
                });
                let second = self.host(&env2, depth - 1);
                format!("(let {t} {first} {second})")
            }
            // Host control flow: a branch, a loop with a condition computed on the device as a
            // `[bool]1`, or a loop of a fixed or run-time number of steps, over kernels that
            // keep the state's type; their bodies may hold further sections.
            10 | 11 | 14
                if matches!(*elem, Ty::Float | Ty::Int) && n.text.chars().all(|c| c.is_ascii_alphanumeric()) =>
            {
                self.host_flow(env, &a, &elem, &n, depth)
            }
            10 if elem.flat() => {
                let k = self.pick(&[1, 2, 3]);
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: (*elem).clone(),
                });
                let body = self.value(&elem, &inner, 2);
                let s = self.name("s");
                format!("(iterate #{k} (lambda ({s}) (toGlobal (mapGlb (lambda ({x}) {body}) {s}))) {a})")
            }
            // An existential array made explicitly (`pack`), then taken apart again.
            12 if elem.flat() => {
                let ys = self.name("ys");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: ys.clone(),
                    ty: Ty::Exists(elem.clone(), n.clone()),
                });
                let (f, _) = self.seq_fn(&elem, &inner, 1);
                format!("(unpack {ys} (pack {a}) (toGlobal (mapGlb {f} {ys})))")
            }
            _ => {
                let (f, _) = self.seq_fn(&elem, env, 2);
                let g = self.wrap_fn_body(&f, "toGlobal");
                format!("(mapGlb {g} {a})")
            }
        }
    }

    /// A host section over `a : [elem]n` (`elem` a float or an int): `if`, `iterate` (a literal
    /// or run-time count, up to 60 steps) or `iterate-until`, whose parts are kernels that map
    /// the state to the same type, and at `depth > 0` may hold sections of their own.
    fn host_flow(&mut self, env: &[Var], a: &str, elem: &Ty, n: &Len, depth: usize) -> String {
        match self.rng.below(3) {
            0 => {
                let c = self.any_test(env, a, elem, n);
                let yes = self.state_step(env, a, elem, n, depth);
                let no = if self.chance(25) {
                    a.to_string()
                } else {
                    self.state_step(env, a, elem, n, depth)
                };
                format!("(if {c} {yes} {no})")
            }
            1 => {
                let count = if self.chance(40) {
                    if self.run_time_steps.is_none() {
                        self.run_time_steps = Some(self.pick(&[4, 17, 40]));
                    }
                    "K".to_string()
                } else {
                    format!("#{}", self.pick(&[1, 2, 3, 8, 25, 60]))
                };
                let s = self.name("s");
                let body = self.state_step(env, &s, elem, n, depth);
                format!("(iterate {count} (lambda ({s}) {body}) {a})")
            }
            _ => {
                let (prev, next) = (self.name("prev"), self.name("next"));
                let cond = if self.chance(50) {
                    self.any_test(env, &next, elem, n)
                } else {
                    // converged: every element changed by less than some amount
                    let (acc, pq) = (self.name("acc"), self.name("pq"));
                    let eps = if *elem == Ty::Float { "0.5f" } else { "1" };
                    let diff = format!("(abs (- (get #0 {pq}) (get #1 {pq})))");
                    format!(
                        "(join (mapGlb (lambda (all) (toGlobal (reduceSeq (lambda ({acc} {pq}) (and {acc} (< {diff} {eps}))) true all))) (split {} (zip {prev} {next}))))",
                        n.size_arg()
                    )
                };
                let s = self.name("s");
                let body = self.state_step(env, &s, elem, n, depth);
                let max = self.pick(&[2, 3, 5, 20, 60]);
                format!("(iterate-until #{max} (lambda ({prev} {next}) {cond}) (lambda ({s}) {body}) {a})")
            }
        }
    }

    /// `[bool]1`: whether some element of `arr` passes a random test (a fold by one work-item).
    fn any_test(&mut self, env: &[Var], arr: &str, elem: &Ty, n: &Len) -> String {
        let (acc, x) = (self.name("acc"), self.name("x"));
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let test = self.scalar(&Ty::Bool, &inner, 1);
        let op = self.pick(&["or", "and"]);
        let z = if op == "or" { "false" } else { "true" };
        format!(
            "(join (mapGlb (lambda (c) (toGlobal (reduceSeq (lambda ({acc} {x}) ({op} {acc} {test})) {z} c))) (split {} {arr})))",
            n.size_arg()
        )
    }

    /// One step of a host loop or a branch: `[elem]n` to `[elem]n` in one kernel, two kernels
    /// (a `let` between them), or (at `depth > 0`) a nested section. Elements are clamped to
    /// [-64, 64], so that many steps neither overflow nor lose all precision.
    fn state_step(&mut self, env: &[Var], s: &str, elem: &Ty, n: &Len, depth: usize) -> String {
        let kernel = |g: &mut Gen, arr: &str, env: &[Var]| {
            let x = g.name("x");
            let mut inner = env.to_vec();
            inner.push(Var {
                name: x.clone(),
                ty: elem.clone(),
            });
            let v = g.value(elem, &inner, 2);
            let clamped = if *elem == Ty::Float {
                format!("(min 64.0f (max -64.0f {v}))")
            } else {
                format!("(min 64 (max -64 {v}))")
            };
            format!("(toGlobal (mapGlb (lambda ({x}) {clamped}) {arr}))")
        };
        match self.rng.below(4) {
            0 if depth > 0 => self.host_flow(env, s, elem, n, depth - 1),
            1 => {
                let t = self.name("t");
                let first = kernel(self, s, env);
                let mut env2 = env.to_vec();
                env2.push(Var {
                    name: t.clone(),
                    ty: Ty::arr(elem.clone(), n.clone()),
                });
                let second = kernel(self, &t, &env2);
                format!("(let {t} {first} {second})")
            }
            _ => kernel(self, s, env),
        }
    }

    /// `(lambda (x) body)` to `(lambda (x) (wrap body))`.
    fn wrap_fn_body(&self, f: &str, wrap: &str) -> String {
        let close = f.find(')').expect("a lambda has a parameter list") + 1;
        format!("{} ({wrap} {}))", &f[..close], &f[close + 1..f.len() - 1])
    }

    /// `mapWrg` over chunks (or rows), `mapLcl` inside, maybe staged in local memory.
    fn work_groups(&mut self, env: &[Var], a: String, at: &Ty) -> String {
        let Ty::Array(elem, n) = at else {
            unreachable!("an array")
        };
        if let Ty::Array(inner, m) = &**elem {
            if inner.flat() && n.val % 2 == 0 && m.val % 2 == 0 && self.chance(45) {
                // 2-D work-groups of 2x2 tiles (as examples/tile_2d.lisp), in dimensions 0 and 1
                // or 0 and 2.
                let (rows, tile, col) = (self.name("rows"), self.name("tile"), self.name("col"));
                let (f, rt) = self.seq_fn(inner, env, 1);
                let f = if rt.flat() {
                    f
                } else {
                    self.wrap_fn_body(&f, "toGlobal")
                };
                let d = if self.chance(30) { 2 } else { 1 };
                return format!(
                    "(mapWrg{d} (lambda ({rows}) (mapWrg (lambda ({tile}) (toGlobal (mapLcl{d} (lambda ({col}) (mapLcl {f} {col})) {tile}))) (split #2 (transpose {rows})))) (split #2 {a}))"
                );
            }
        }
        let (chunks, row_ty, joined) = match &**elem {
            Ty::Array(inner, m) if self.chance(50) => (a.clone(), Ty::arr((**inner).clone(), m.clone()), false),
            _ => {
                let k = self.pick(&[2, 4, 8, 16]);
                if n.val % k != 0 && !self.unruly {
                    return self.host(env, 0);
                }
                (
                    format!("(split #{k} {a})"),
                    Ty::arr((**elem).clone(), Len::lit(k)),
                    true,
                )
            }
        };
        let Ty::Array(e, rl) = row_ty.clone() else {
            unreachable!("rows are arrays")
        };
        let c = self.name("chunk");
        let mut staged = c.clone();
        if self.chance(50) {
            let space = if self.chance(80) { "toLocal" } else { "toPrivate" };
            staged = format!("({space} (mapLcl (lambda (x) x) {c}))");
            if self.chance(40) {
                staged = format!("(reverse {staged})");
            }
        }
        if matches!(*e, Ty::Float | Ty::Int) && self.chance(30) && rl.val.is_power_of_two() && rl.val >= 2 {
            // The classic tree reduction in local memory.
            let steps = rl.val.trailing_zeros();
            let acc_z = if *e == Ty::Float { "0.0f" } else { "0" };
            let fold = self.fold_fn(&e, &e, env);
            let body = format!(
                "(toGlobal (mapLcl (lambda (x) x) (iterate #{steps} (lambda (a) (join (mapLcl (lambda (pair) (toLocal (reduceSeq {fold} {acc_z} pair))) (split #2 a)))) (toLocal (mapLcl (lambda (x) x) {c})))))"
            );
            let out = format!("(mapWrg (lambda ({c}) {body}) {chunks})");
            return if joined { format!("(join {out})") } else { out };
        }
        let mut inner = env.to_vec();
        inner.push(Var {
            name: c.clone(),
            ty: row_ty.clone(),
        });
        let (f, rt) = self.seq_fn(&e, &inner, 2);
        let f = if rt.flat() {
            f
        } else {
            self.wrap_fn_body(&f, "toGlobal")
        };
        let lcl = if self.unruly && self.chance(30) {
            "mapGlb"
        } else {
            "mapLcl"
        };
        let body = format!("(toGlobal ({lcl} {f} {staged}))");
        let wrg = if self.unruly && self.chance(30) {
            "mapLcl"
        } else {
            "mapWrg"
        };
        let out = format!("({wrg} (lambda ({c}) {body}) {chunks})");
        if joined && rt.flat() {
            format!("(join {out})")
        } else {
            out
        }
    }

    // ---- inside one work-item ------------------------------------------------------------------

    /// A function of one `elem` for one work-item, and its result type.
    fn seq_fn(&mut self, elem: &Ty, env: &[Var], depth: usize) -> (String, Ty) {
        let x = self.name("x");
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let (body, rt) = self.seq_body(&x, elem, &inner, depth);
        (format!("(lambda ({x}) {body})"), rt)
    }

    /// The body of a per-element function whose argument `x` has type `xt`.
    fn seq_body(&mut self, x: &str, xt: &Ty, env: &[Var], depth: usize) -> (String, Ty) {
        match xt {
            Ty::Array(e, n) if depth > 0 => {
                let e = (**e).clone();
                match self.rng.below(8) {
                    0 | 1 => {
                        let (f, rt) = self.seq_fn(&e, env, depth - 1);
                        let map = self.pick(&["mapSeq", "mapSeq", "mapSeqUnroll"]);
                        let mut out = if self.chance(15) {
                            // partially applied, then applied to the array
                            format!("(({map} {f}) {x})")
                        } else {
                            format!("({map} {f} {x})")
                        };
                        if rt.flat() && self.chance(30) {
                            out = format!("(toPrivate {out})");
                            let (g, gt) = self.seq_fn(&rt, env, 0);
                            if gt.flat() {
                                out = format!("(mapSeq {g} {out})");
                                return (out, Ty::arr(gt, n.clone()));
                            }
                        }
                        (out, Ty::arr(rt, n.clone()))
                    }
                    2 | 3 => {
                        let (z, zt) = self.accumulator(&e);
                        let f = self.fold_fn(&zt, &e, env);
                        let red = self.pick(&["reduceSeq", "reduceSeq", "reduceSeqUnroll"]);
                        if self.chance(15) {
                            return (format!("(({red} {f} {z}) {x})"), Ty::arr(zt, Len::lit(1)));
                        }
                        (format!("({red} {f} {z} {x})"), Ty::arr(zt, Len::lit(1)))
                    }
                    4 if e.flat() => {
                        let p = self.pred_fn(&e, env);
                        if self.chance(50) {
                            let ys = self.name("ys");
                            let (f, rt) = self.seq_fn(&e, env, 0);
                            return (
                                format!("(let {ys} (filterSeq {p} {x}) (toGlobal (mapSeq {f} {ys})))"),
                                Ty::Exists(Box::new(rt), n.clone()),
                            );
                        }
                        (format!("(filterSeq {p} {x})"), Ty::Exists(Box::new(e), n.clone()))
                    }
                    5 if e.flat() && n.val <= 16 => {
                        let k = self.pick(&[1, 2, 3]);
                        let y = self.name("y");
                        let mut inner = env.to_vec();
                        inner.push(Var {
                            name: y.clone(),
                            ty: e.clone(),
                        });
                        let step = self.value(&e, &inner, 1);
                        let a = self.name("a");
                        let space = self.pick(&["toPrivate", "toPrivate", "toGlobal"]);
                        (
                            format!(
                                "(mapSeq (lambda (q) q) (iterate #{k} (lambda ({a}) ({space} (mapSeq (lambda ({y}) {step}) {a}))) (toPrivate (mapSeq (lambda (q) q) {x}))))"
                            ),
                            Ty::arr(e, n.clone()),
                        )
                    }
                    6 => {
                        let (v, vt) = self.layout(env, x.to_string(), xt.clone());
                        let (f, rt) = self.seq_fn(
                            match &vt {
                                Ty::Array(e, _) => e,
                                _ => unreachable!("layouts give arrays"),
                            },
                            env,
                            depth - 1,
                        );
                        let Ty::Array(_, m) = vt else { unreachable!("an array") };
                        (format!("(mapSeq {f} {v})"), Ty::arr(rt, m))
                    }
                    // a tuple holding arrays (stored as one buffer per component): a mapped
                    // copy of the row, or a reduction, next to a scalar, a vector or another
                    _ if self.chance(30) => {
                        let (f, rt) = self.seq_fn(&e, env, 0);
                        let a = (format!("(mapSeq {f} {x})"), Ty::arr(rt, n.clone()));
                        let (z, zt) = self.accumulator(&e);
                        let g = self.fold_fn(&zt, &e, env);
                        let b = (format!("(reduceSeq {g} {z} {x})"), Ty::arr(zt, Len::lit(1)));
                        let (c, ct) = if self.chance(50) {
                            b
                        } else {
                            let t = self.flat_type(env);
                            (self.value(&t, env, 1), t)
                        };
                        let (l, r) = if self.chance(50) { (a, (c, ct)) } else { ((c, ct), a) };
                        (format!("(tuple {} {})", l.0, r.0), Ty::Tuple(vec![l.1, r.1]))
                    }
                    _ => {
                        let t = self.flat_type(env);
                        (self.value(&t, env, 2), t)
                    }
                }
            }
            _ => {
                let t = if xt.flat() && self.chance(60) {
                    xt.clone()
                } else {
                    self.flat_type(env)
                };
                (self.value(&t, env, 3), t)
            }
        }
    }

    /// The initial value of a fold over `elem`s and the accumulator type.
    fn accumulator(&mut self, elem: &Ty) -> (String, Ty) {
        match elem {
            Ty::Int => (self.pick(&["0", "1"]).to_string(), Ty::Int),
            Ty::Vector(..) => (self.value(elem, &[], 0), elem.clone()),
            Ty::Tuple(_) if self.chance(30) => {
                let t = Ty::Tuple(vec![Ty::Float, Ty::Int]);
                (self.value(&t, &[], 0), t)
            }
            _ => (self.pick(&["0.0f", "0.0f", "1.0f", "-2.0f"]).to_string(), Ty::Float),
        }
    }

    /// `(lambda (acc x) ...)`: accumulator `acc` of `zt`, element `x` of `elem`.
    fn fold_fn(&mut self, zt: &Ty, elem: &Ty, env: &[Var]) -> String {
        let (acc, x) = (self.name("acc"), self.name("x"));
        if *zt == Ty::Float && *elem == Ty::Float && self.chance(40) {
            return self.pick(&["+", "max", "min"]).to_string();
        }
        let mut inner = env.to_vec();
        inner.push(Var {
            name: acc.clone(),
            ty: zt.clone(),
        });
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        // The accumulator is always used, so the fold really folds.
        let body = match zt {
            Ty::Float => {
                let v = self.value(&Ty::Float, &inner, 2);
                let op = self.pick(&["+", "+", "max", "min"]);
                format!("({op} {acc} {v})")
            }
            Ty::Int => {
                let v = self.value(&Ty::Int, &inner, 2);
                format!("(+ {acc} {v})")
            }
            Ty::Vector(..) => {
                let v = self.value(zt, &inner, 1);
                format!("(+ {acc} {v})")
            }
            _ => self.value(zt, &inner, 2),
        };
        format!("(lambda ({acc} {x}) {body})")
    }

    fn pred_fn(&mut self, elem: &Ty, env: &[Var]) -> String {
        let x = self.name("x");
        let mut inner = env.to_vec();
        inner.push(Var {
            name: x.clone(),
            ty: elem.clone(),
        });
        let body = self.scalar(&Ty::Bool, &inner, 2);
        format!("(lambda ({x}) {body})")
    }

    fn flat_type(&mut self, env: &[Var]) -> Ty {
        let vectors: Vec<Ty> = env
            .iter()
            .filter_map(|v| match &v.ty {
                Ty::Vector(..) => Some(v.ty.clone()),
                _ => None,
            })
            .collect();
        match self.rng.below(12) {
            0..=4 => Ty::Float,
            5 | 6 => Ty::Int,
            7 => Ty::Bool,
            // tuples holding vectors: C structs whose vector members are aligned to their size
            8 if self.chance(35) => {
                let w = self.pick(&[2, 3, 4, 8]);
                let lane = self.lane();
                if self.chance(50) {
                    Ty::Tuple(vec![Ty::Vector(lane, w), Ty::Float])
                } else {
                    Ty::Tuple(vec![Ty::Int, Ty::Tuple(vec![Ty::Float, Ty::Vector(lane, w)])])
                }
            }
            8 => Ty::Tuple(vec![Ty::Float, Ty::Int]),
            9 if self.chance(40) => Ty::Tuple(vec![Ty::Float, Ty::Tuple(vec![Ty::Int, Ty::Float])]),
            9 => Ty::Double,
            10 if !vectors.is_empty() => self.pick(&vectors),
            11 => {
                let lane = self.lane();
                Ty::Vector(lane, self.pick(&[2, 3, 4, 4, 8, 16]))
            }
            _ => Ty::Float,
        }
    }

    // ---- high level ----------------------------------------------------------------------------

    /// A program of high-level primitives only; the compiler chooses how to run it.
    fn high_level(&mut self, env: &[Var]) -> String {
        let (a, at) = self.source(env, 1);
        let (e, _) = self.hl(env, a, at, 2);
        e
    }

    fn hl(&mut self, env: &[Var], a: String, at: Ty, depth: usize) -> (String, Ty) {
        let Ty::Array(elem, n) = at.clone() else {
            unreachable!("an array")
        };
        let elem = *elem;
        match self.rng.below(6) {
            0 | 1 => {
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: elem.clone(),
                });
                let (body, rt) = match &elem {
                    Ty::Array(..) if depth > 0 => self.hl(&inner, x.clone(), elem.clone(), depth - 1),
                    _ => {
                        let t = if elem.flat() && elem != Ty::Bool {
                            elem.clone()
                        } else {
                            Ty::Float
                        };
                        (self.value(&t, &inner, 2), t)
                    }
                };
                (format!("(map (lambda ({x}) {body}) {a})"), Ty::arr(rt, n))
            }
            2 if matches!(elem, Ty::Float | Ty::Int) => {
                let z = if elem == Ty::Float { "0.0f" } else { "0" };
                let op = self.pick(&["+", "+", "max", "min"]);
                (format!("(reduce {op} {z} {a})"), Ty::arr(elem, Len::lit(1)))
            }
            3 if elem.flat() => {
                let p = self.pred_fn(&elem, env);
                let filtered = format!("(filter {p} {a})");
                if self.chance(60) {
                    let x = self.name("x");
                    let mut inner = env.to_vec();
                    inner.push(Var {
                        name: x.clone(),
                        ty: elem.clone(),
                    });
                    let body = self.value(&Ty::Float, &inner, 1);
                    return (
                        format!("(map (lambda ({x}) {body}) {filtered})"),
                        Ty::Exists(Box::new(Ty::Float), n),
                    );
                }
                (filtered, Ty::Exists(Box::new(elem), n))
            }
            4 if elem.flat() && elem != Ty::Bool => {
                let k = self.pick(&[1, 2]);
                let x = self.name("x");
                let mut inner = env.to_vec();
                inner.push(Var {
                    name: x.clone(),
                    ty: elem.clone(),
                });
                let body = self.value(&elem, &inner, 1);
                let s = self.name("s");
                (
                    format!("(iterate #{k} (lambda ({s}) (map (lambda ({x}) {body}) {s})) {a})"),
                    at,
                )
            }
            _ => {
                let (v, vt) = self.layout(env, a, at);
                if depth == 0 {
                    return (v, vt);
                }
                self.hl(env, v, vt, depth - 1)
            }
        }
    }

    // ---- shapes the rewrite rules fire on (the variants mode) ---------------------------------

    /// A high-level program for the variants mode (`crate::variants`): mostly a shape the
    /// rewrite rules fire on — maps of reductions (gemv), matrix products as map/map/reduce over
    /// the zip of a row and a column (plain, transposed operands, over a batch), transposes,
    /// slides and 2-D slides in maps, sums and dot products, filters followed by maps, sums over
    /// zips of three — with random element functions, and sizes that the tiles divide (mostly)
    /// or do not; else a random high-level program of [`Gen::case`]'s generator.
    pub fn variants_case(seed: u64, index: u64) -> Case {
        let mut g = Gen {
            rng: XorShift::new(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ index ^ 0x5641_5249),
            fresh: 0,
            defs: vec![],
            unruly: false,
            run_time_steps: None,
            high_level_only: true,
        };
        let (id, data_seed) = (format!("{seed}:{index}"), seed ^ index.rotate_left(17));
        if g.chance(12) {
            return g.program(id, data_seed);
        }
        g.shaped(id, data_seed)
    }

    /// A size variable `name`: a value from `divisible` (three times in four), else from `other`.
    fn dim(&mut self, name: &str, divisible: &[usize], other: &[usize]) -> Len {
        let val = if self.chance(25) {
            self.pick(other)
        } else {
            self.pick(divisible)
        };
        Len { text: name.into(), val }
    }

    /// The body of a function of a pair of floats `p` (the elements of a zip): mostly their
    /// product, the dot product's.
    fn pair_fn(&mut self, p: &str) -> String {
        if self.chance(70) {
            return format!("(* (get #0 {p}) (get #1 {p}))");
        }
        let env = [Var {
            name: p.into(),
            ty: Ty::Tuple(vec![Ty::Float, Ty::Float]),
        }];
        self.value(&Ty::Float, &env, 2)
    }

    /// The body of a function of a float `x`.
    fn float_fn(&mut self, x: &str, identity: usize) -> String {
        if self.chance(identity) {
            return x.to_string();
        }
        let env = [Var {
            name: x.into(),
            ty: Ty::Float,
        }];
        self.value(&Ty::Float, &env, 2)
    }

    /// A reduction's operator and its neutral element: mostly `+` (the rules recognise `+`,
    /// `max`, `min` as associative), sometimes a lambda they see as opaque.
    fn reduce_op(&mut self) -> (String, &'static str) {
        let (a, b) = (self.name("acc"), self.name("y"));
        // sometimes a start that is not the operator's neutral element: a rule that splits the
        // reduction must then not fire (its side condition), or the start counts many times
        let odd = self.chance(15);
        match self.rng.below(10) {
            0..=5 if odd => ("+".into(), "1.5f"),
            0..=5 => ("+".into(), "0.0f"),
            6 if odd => ("max".into(), "0.5f"),
            6 => ("max".into(), "-1.0e30f"),
            7 if odd => ("min".into(), "-0.5f"),
            7 => ("min".into(), "1.0e30f"),
            8 => (
                format!("(lambda ({a} {b}) (+ {a} {b}))"),
                if odd { "-2.0f" } else { "0.0f" },
            ),
            _ => (format!("(lambda ({a} {b}) (max {a} {b}))"), "-1.0e30f"),
        }
    }

    /// `(reduce op z (map (λp. f p) (zip xs ys)))`: a dot product, or like one.
    fn dot(&mut self, xs: &str, ys: &str) -> String {
        let (op, z) = self.reduce_op();
        let p = self.name("p");
        let f = self.pair_fn(&p);
        format!("(reduce {op} {z} (map (lambda ({p}) {f}) (zip {xs} {ys})))")
    }

    fn shaped(&mut self, id: String, data_seed: u64) -> Case {
        let mut params: Vec<(String, Ty)> = vec![];
        let mut sizes: Vec<Len> = vec![];
        let f = Ty::Float;
        let body = match self.rng.below(20) {
            // gemv: rows of a matrix against a vector, with a bias, or the columns (gemv T)
            0..=2 => {
                let m = self.dim("M", &[16, 32, 64, 128, 256], &[20, 36, 48, 100]);
                let n = self.dim("N", &[16, 32, 64, 128, 256], &[12, 24, 40, 100]);
                let row = self.name("row");
                sizes.extend([m.clone(), n.clone()]);
                match self.rng.below(3) {
                    0 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), n.clone())));
                        let d = self.dot(&row, "x");
                        format!("(map (lambda ({row}) {d}) a)")
                    }
                    1 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), n.clone())));
                        params.push(("b".into(), Ty::arr(f.clone(), m.clone())));
                        let (rb, s) = (self.name("rb"), self.name("s"));
                        let d = self.dot(&format!("(get #0 {rb})"), "x");
                        let post = if self.chance(60) {
                            format!("(+ {s} (get #1 {rb}))")
                        } else {
                            format!("(+ (* 2.0f {s}) (* 0.5f (get #1 {rb})))")
                        };
                        format!("(join (map (lambda ({rb}) (map (lambda ({s}) {post}) {d})) (zip a b)))")
                    }
                    _ => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                        params.push(("x".into(), Ty::arr(f.clone(), m.clone())));
                        let d = self.dot(&row, "x");
                        format!("(map (lambda ({row}) {d}) (transpose a))")
                    }
                }
            }
            // matrix products: a row against a column of b (transposed, or given as rows)
            3..=6 => {
                // big enough for the register-blocked tiles (64 and 128 rows and columns) with
                // known sizes, a short K keeping the interpreter's work near 2^20
                let big = self.chance(25);
                let m = if big {
                    Len::var("M", self.pick(&[128, 128, 256]))
                } else {
                    self.dim("M", &[16, 32, 64], &[12, 20, 24, 48])
                };
                let n = if big {
                    Len::var("N", self.pick(&[64, 128, 128]))
                } else {
                    self.dim("N", &[16, 32, 64], &[12, 20, 40, 48])
                };
                let k = if big {
                    self.dim("K", &[8, 16, 32], &[12])
                } else {
                    self.dim("K", &[4, 8, 16, 32, 64], &[12, 20, 24])
                };
                let (row, col) = (self.name("row"), self.name("col"));
                let (rows, cols) = match self.rng.below(4) {
                    0 | 1 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone())));
                        ("a", "(transpose b)")
                    }
                    2 => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), k.clone()), n.clone())));
                        ("a", "b")
                    }
                    _ => {
                        params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), m.clone()), k.clone())));
                        params.push(("b".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone())));
                        ("(transpose a)", "(transpose b)")
                    }
                };
                sizes.extend([m, k, n]);
                let d = self.dot(&row, &col);
                if self.chance(50) {
                    format!("(map (lambda ({row}) (join (map (lambda ({col}) {d}) {cols}))) {rows})")
                } else {
                    format!("(map (lambda ({row}) (map (lambda ({col}) {d}) {cols})) {rows})")
                }
            }
            // a batch of small products
            7 => {
                let b = self.dim("B", &[1, 2, 3, 4], &[2]);
                let m = self.dim("M", &[16, 32], &[12, 20]);
                let n = self.dim("N", &[16, 32], &[24]);
                let k = self.dim("K", &[8, 16, 32], &[12]);
                let [m, n, k] = if self.chance(20) {
                    [Len::var("M", 64), Len::var("N", 64), Len::var("K", 16)]
                } else {
                    [m, n, k]
                };
                params.push((
                    "as".into(),
                    Ty::arr(Ty::arr(Ty::arr(f.clone(), k.clone()), m.clone()), b.clone()),
                ));
                params.push((
                    "bs".into(),
                    Ty::arr(Ty::arr(Ty::arr(f.clone(), n.clone()), k.clone()), b.clone()),
                ));
                sizes.extend([b, m, k, n]);
                let (ab, row, col) = (self.name("ab"), self.name("row"), self.name("col"));
                let d = self.dot(&row, &col);
                format!(
                    "(map (lambda ({ab}) (map (lambda ({row}) (map (lambda ({col}) {d}) (transpose (get #1 {ab})))) (get #0 {ab}))) (zip as bs))"
                )
            }
            // a transpose, with a function of the elements
            8 => {
                let m = self.dim("M", &[16, 32, 64, 128], &[12, 20, 36]);
                let n = self.dim("N", &[16, 32, 64, 128], &[24, 40]);
                params.push(("m".into(), Ty::arr(Ty::arr(f.clone(), n.clone()), m.clone())));
                sizes.extend([m, n]);
                let (row, x) = (self.name("row"), self.name("x"));
                let g = self.float_fn(&x, 50);
                format!("(map (lambda ({row}) (map (lambda ({x}) {g}) {row})) (transpose m))")
            }
            // slides: a 1-D stencil, alone or in the rows of a matrix
            9 | 10 => {
                let s = self.pick(&[3, 3, 5, 17]);
                let step = if self.chance(20) { 2 } else { 1 };
                let pad = self.rng.below(3);
                let win = |xs: &str| {
                    let slid = match pad {
                        0 => xs.to_string(),
                        1 => format!("(pad-clamp #{} #{} {xs})", s / 2, s / 2),
                        _ => format!("(pad #{} #{} 0.0f {xs})", s / 2, s / 2),
                    };
                    format!("(slide #{s} #{step} {slid})")
                };
                let nbh = self.name("nbh");
                let weighted = self.chance(50);
                let stencil = if weighted {
                    params.push(("w".into(), Ty::arr(f.clone(), Len::lit(s))));
                    self.dot(&nbh, "w")
                } else {
                    let (op, z) = self.reduce_op();
                    let x = self.name("x");
                    let g = self.float_fn(&x, 60);
                    format!("(reduce {op} {z} (map (lambda ({x}) {g}) {nbh}))")
                };
                // lengths that the windows' step divides after the padding
                let fits = |n: usize| {
                    let padded = if pad == 0 { n } else { n + 2 * (s / 2) };
                    padded >= s && (padded - s).is_multiple_of(step)
                };
                if self.chance(50) {
                    let choices: Vec<usize> = [17, 32, 33, 64, 65, 100, 128, 129, 1024, 1025]
                        .into_iter()
                        .filter(|n| fits(*n))
                        .collect();
                    let n = Len {
                        text: "N".into(),
                        val: self.pick(&choices),
                    };
                    params.insert(0, ("xs".into(), Ty::arr(f.clone(), n.clone())));
                    sizes.push(n);
                    format!("(map (lambda ({nbh}) {stencil}) {})", win("xs"))
                } else {
                    let choices: Vec<usize> = [17, 19, 32, 33, 64, 65].into_iter().filter(|n| fits(*n)).collect();
                    let h = self.dim("H", &[4, 16, 32], &[5, 7]);
                    let w = Len {
                        text: "W".into(),
                        val: self.pick(&choices),
                    };
                    params.insert(0, ("img".into(), Ty::arr(Ty::arr(f.clone(), w.clone()), h.clone())));
                    sizes.extend([h, w]);
                    let row = self.name("row");
                    let inner = format!("(map (lambda ({nbh}) {stencil}) {})", win(&row));
                    if self.chance(50) {
                        format!("(map (lambda ({row}) {inner}) img)")
                    } else {
                        format!("(join (map (lambda ({row}) {inner}) img))")
                    }
                }
            }
            // a 2-D stencil over 2-D windows (jacobi2d)
            11 | 12 => {
                let h = self.dim("H", &[8, 16, 32, 64], &[5, 10, 30]);
                let w = self.dim("W", &[8, 16, 32, 64], &[6, 20, 33]);
                let s = self.pick(&[3, 3, 5]);
                let (hp, wp) = (
                    Len {
                        text: format!("(+ H {})", s - 1),
                        val: h.val + s - 1,
                    },
                    Len {
                        text: format!("(+ W {})", s - 1),
                        val: w.val + s - 1,
                    },
                );
                params.push(("g".into(), Ty::arr(Ty::arr(f.clone(), wp), hp)));
                sizes.extend([h, w]);
                let sl = self.name("slide2d");
                self.defs.push(format!(
                    "(define ({sl} s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss))))"
                ));
                let (nbhs, nbh) = (self.name("nbhs"), self.name("nbh"));
                let stencil = if self.chance(30) {
                    let (op, z) = self.reduce_op();
                    format!("(reduce {op} {z} (join {nbh}))")
                } else {
                    let cells: Vec<String> = (0..self.rng.below(4) + 2)
                        .map(|_| {
                            let (r, c) = (self.rng.below(s), self.rng.below(s));
                            format!("(at {c} (at {r} {nbh}))")
                        })
                        .collect();
                    let sum = cells
                        .iter()
                        .skip(1)
                        .fold(cells[0].clone(), |acc, c| format!("(+ {acc} {c})"));
                    format!("(* 0.25f {sum})")
                };
                format!("(map (lambda ({nbhs}) (map (lambda ({nbh}) {stencil}) {nbhs})) ({sl} #{s} #1 g))")
            }
            // sums, of a function of the elements, dot products
            13..=15 => {
                let n = self.dim("N", &[1024, 4096, 16384, 65536, 256], &[1000, 5000, 70000, 33, 300]);
                params.push(("xs".into(), Ty::arr(f.clone(), n.clone())));
                sizes.push(n.clone());
                match self.rng.below(3) {
                    0 => {
                        let (op, z) = self.reduce_op();
                        format!("(reduce {op} {z} xs)")
                    }
                    1 => {
                        let (op, z) = self.reduce_op();
                        let x = self.name("x");
                        let g = self.float_fn(&x, 0);
                        format!("(reduce {op} {z} (map (lambda ({x}) {g}) xs))")
                    }
                    _ => {
                        params.push(("ys".into(), Ty::arr(f.clone(), n)));
                        self.dot("xs", "ys")
                    }
                }
            }
            // filters followed by maps
            16 => {
                let n = self.dim("N", &[64, 256, 1024, 4096], &[33, 100, 1000]);
                params.push(("xs".into(), Ty::arr(f.clone(), n.clone())));
                sizes.push(n);
                let p = self.pred_fn(&f, &[]);
                let x = self.name("x");
                let g = self.float_fn(&x, 10);
                format!("(map (lambda ({x}) {g}) (filter {p} xs))")
            }
            // sums over zips of three
            17 => {
                let n = self.dim("N", &[256, 1024, 4096, 65536], &[100, 1000, 5000]);
                for v in ["a", "b", "c"] {
                    params.push((v.into(), Ty::arr(f.clone(), n.clone())));
                }
                sizes.push(n);
                let t = self.name("t");
                let env = [Var {
                    name: t.clone(),
                    ty: Ty::Tuple(vec![f.clone(), f.clone(), f.clone()]),
                }];
                let g = if self.chance(60) {
                    format!("(+ (* (get #0 {t}) (get #1 {t})) (get #2 {t}))")
                } else {
                    self.value(&f, &env, 2)
                };
                let (op, z) = self.reduce_op();
                format!("(reduce {op} {z} (map (lambda ({t}) {g}) (zip a b c)))")
            }
            // rows or columns of a matrix reduced
            _ => {
                let r = self.dim("R", &[16, 64, 256, 1024], &[20, 100]);
                let c = self.dim("C", &[16, 64, 256, 1024], &[24, 100]);
                let [r, c] = if r.val * c.val > 65536 {
                    [Len::var("R", 64), c]
                } else {
                    [r, c]
                };
                params.push(("a".into(), Ty::arr(Ty::arr(f.clone(), c.clone()), r.clone())));
                sizes.extend([r, c]);
                let (op, z) = self.reduce_op();
                let (row, x) = (self.name("row"), self.name("x"));
                let g = self.float_fn(&x, 50);
                let rows = if self.chance(40) { "(transpose a)" } else { "a" };
                format!("(map (lambda ({row}) (reduce {op} {z} (map (lambda ({x}) {g}) {row}))) {rows})")
            }
        };
        let mut src = String::new();
        for d in &self.defs {
            src.push_str(d);
            src.push('\n');
        }
        let _ = write!(
            src,
            "(lift\n  ({})\n  ({})\n  (lambda ({})\n    {body}))\n",
            sizes.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(_, t)| t.lift()).collect::<Vec<_>>().join(" "),
            params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(" "),
        );
        Case {
            id,
            src,
            params,
            sizes: sizes.into_iter().map(|l| (l.text, l.val)).collect(),
            data_seed,
            plain_data: false,
        }
    }

    // ---- values, backwards ---------------------------------------------------------------------

    /// A value of a flat type.
    fn value(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        match t {
            Ty::Float | Ty::Double | Ty::Int | Ty::Bool => self.scalar(t, env, depth),
            Ty::Vector(l, w) => self.vector(*l, *w, env, depth),
            Ty::Tuple(ts) => {
                if let Some(v) = self.leaf(t, env) {
                    if self.chance(40) {
                        return v;
                    }
                }
                if depth > 0 && self.chance(15) {
                    let c = self.scalar(&Ty::Bool, env, 1);
                    let a = self.value(t, env, depth - 1);
                    let b = self.value(t, env, depth - 1);
                    return format!("(if {c} {a} {b})");
                }
                let parts: Vec<String> = ts.iter().map(|c| self.value(c, env, depth.saturating_sub(1))).collect();
                format!("(tuple {})", parts.join(" "))
            }
            Ty::Array(..) | Ty::Exists(..) => unreachable!("values are flat"),
        }
    }

    /// A variable (or a component or element of one) of type `t`.
    fn leaf(&mut self, t: &Ty, env: &[Var]) -> Option<String> {
        // The innermost variables (the element a lambda works on) first: a function that
        // ignores its argument tests little.
        let mut found = vec![];
        for v in env.iter().rev() {
            let mut here = vec![];
            paths(&v.name, &v.ty, t, &mut here, 0);
            if !here.is_empty() && self.chance(65) {
                return Some(self.pick(&here));
            }
            found.extend(here);
        }
        if found.is_empty() {
            None
        } else {
            Some(self.pick(&found))
        }
    }

    fn literal(&mut self, t: &Ty) -> String {
        match t {
            Ty::Float => self.pick(FLOAT_LITS).to_string(),
            Ty::Double => self.pick(&["0.0d", "1.0d", "-0.5d", "2.0d"]).to_string(),
            Ty::Int => self.pick(INT_LITS).to_string(),
            Ty::Bool => self.pick(&["true", "false"]).to_string(),
            _ => self.value(t, &[], 0),
        }
    }

    fn scalar(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        if depth == 0 || self.chance(20) {
            if let Some(v) = self.leaf(t, env) {
                if self.chance(90) {
                    return v;
                }
            }
            if depth == 0 {
                return self.literal(t);
            }
        }
        let d = depth - 1;
        if self.chance(8) {
            let c = self.scalar(&Ty::Bool, env, d.min(1));
            let a = self.scalar(t, env, d);
            let b = self.scalar(t, env, d);
            return format!("(if {c} {a} {b})");
        }
        if self.chance(5) {
            let v = self.name("v");
            let vt = if self.chance(60) { Ty::Float } else { Ty::Int };
            let e = self.scalar(&vt, env, d);
            let mut inner = env.to_vec();
            inner.push(Var {
                name: v.clone(),
                ty: vt,
            });
            let body = self.scalar(t, &inner, d);
            return format!("(let {v} {e} {body})");
        }
        if self.chance(4) {
            return self.call_definition(t, env, d);
        }
        if self.chance(3) {
            // a function applied where it is written, or through a definition that takes it
            let v = self.name("v");
            let vt = if self.chance(60) { Ty::Float } else { Ty::Int };
            let arg = self.scalar(&vt, env, d);
            let mut inner = env.to_vec();
            inner.push(Var {
                name: v.clone(),
                ty: vt,
            });
            let body = self.scalar(t, &inner, d);
            if self.chance(50) {
                return format!("((lambda ({v}) {body}) {arg})");
            }
            let (app, f, x) = (self.name("apply"), self.name("f"), self.name("a"));
            self.defs.push(format!("(define ({app} {f} {x}) ({f} {x}))"));
            return format!("({app} (lambda ({v}) {body}) {arg})");
        }
        if self.chance(4) {
            if let Some(e) = self.element_at(t, env, d) {
                return e;
            }
        }
        match t {
            Ty::Float => match self.rng.below(16) {
                0..=5 => {
                    let op = self.pick(&["+", "+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                6 => {
                    let a = self.scalar(t, env, d);
                    format!("(- {a})")
                }
                7 => {
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("(/ {a} (+ (abs {b}) 1.0f))")
                }
                8 => {
                    let a = self.scalar(t, env, d);
                    let f = self.pick(&[
                        "(sqrt (abs {}))",
                        "(exp (min {} 2.0f))",
                        "(log (+ (abs {}) 1.0f))",
                        "(sin {})",
                        "(cos {})",
                        "(pow (abs {}) 2.0f)",
                        "(abs {})",
                    ]);
                    f.replace("{}", &a)
                }
                9 => {
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    let c = self.scalar(t, env, d);
                    format!("(fma {a} {b} {c})")
                }
                10 => {
                    let from = if self.chance(20) { Ty::Double } else { Ty::Int };
                    let a = self.scalar(&from, env, d);
                    format!("(to-float {a})")
                }
                11 => self.scalar_of_vector(Lane::Float, env, d),
                _ => {
                    let op = self.pick(&["+", "*", "-", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.literal(t);
                    format!("({op} {a} {b})")
                }
            },
            Ty::Double if self.chance(15) => self.scalar_of_vector(Lane::Double, env, d),
            Ty::Int if self.chance(10) => self.scalar_of_vector(Lane::Int, env, d),
            Ty::Double => match self.rng.below(4) {
                0 | 1 => {
                    let op = self.pick(&["+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                2 => {
                    let a = self.scalar(&Ty::Float, env, d);
                    format!("(to-double {a})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    format!("(sqrt (abs {a}))")
                }
            },
            Ty::Int => match self.rng.below(8) {
                0..=3 => {
                    let op = self.pick(&["+", "+", "*", "-", "min", "max"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                4 => {
                    let op = self.pick(&["/", "%"]);
                    let a = self.scalar(t, env, d);
                    let k = self.pick(&["2", "3", "-4"]);
                    format!("({op} {a} {k})")
                }
                5 => {
                    let a = self.scalar(&Ty::Float, env, d);
                    format!("(to-int {a})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    let b = self.literal(t);
                    format!("(+ {a} {b})")
                }
            },
            Ty::Bool => match self.rng.below(6) {
                0..=3 => {
                    let ot = if self.chance(60) { Ty::Float } else { Ty::Int };
                    let op = self.pick(&["<", "<=", ">", ">=", "=", "!="]);
                    let a = self.scalar(&ot, env, d);
                    let b = self.scalar(&ot, env, d);
                    format!("({op} {a} {b})")
                }
                4 => {
                    let op = self.pick(&["and", "or"]);
                    let a = self.scalar(t, env, d);
                    let b = self.scalar(t, env, d);
                    format!("({op} {a} {b})")
                }
                _ => {
                    let a = self.scalar(t, env, d);
                    format!("(not {a})")
                }
            },
            _ => unreachable!("scalars only"),
        }
    }

    /// `(at i xs)` of an array in scope whose elements have type `t`, with an index kept in
    /// range (mostly) by `min`/`max`.
    fn element_at(&mut self, t: &Ty, env: &[Var], depth: usize) -> Option<String> {
        let mut cands = vec![];
        for v in env {
            if let Ty::Array(e, n) = &v.ty {
                if **e == *t {
                    cands.push((v.name.clone(), n.val));
                }
                if let Ty::Array(e2, m) = &**e {
                    if **e2 == *t {
                        // An element of a row picked by `at`.
                        let i = self.rng.below(n.val.max(1));
                        cands.push((format!("(at {i} {})", v.name), m.val));
                    }
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let (arr, len) = self.pick(&cands);
        let idx = if self.chance(50) {
            self.rng.below(len.max(1)).to_string()
        } else {
            let i = self.scalar(&Ty::Int, env, depth.min(1));
            let hi = if self.unruly && self.chance(30) {
                len
            } else {
                len.saturating_sub(1)
            };
            format!("(min (max {i} 0) {hi})")
        };
        Some(format!("(at {idx} {arr})"))
    }

    /// A call of a new top-level definition (a function of one scalar, or a constant).
    fn call_definition(&mut self, t: &Ty, env: &[Var], depth: usize) -> String {
        let f = self.name("def");
        if self.chance(30) {
            let v = self.literal(t);
            self.defs.push(format!("(define {f} {v})"));
            return f;
        }
        let pt = if self.chance(70) { Ty::Float } else { Ty::Int };
        let p = self.name("p");
        let penv = vec![Var {
            name: p.clone(),
            ty: pt.clone(),
        }];
        let body = self.scalar(t, &penv, depth.min(2));
        self.defs.push(format!("(define ({f} {p}) {body})"));
        let arg = self.scalar(&pt, env, depth);
        format!("({f} {arg})")
    }
}

/// Every expression reading a value of type `want` out of `name` of type `ty` (itself, a
/// component of a tuple, a lane of a vector).
fn paths(name: &str, ty: &Ty, want: &Ty, out: &mut Vec<String>, depth: usize) {
    if ty == want {
        out.push(name.to_string());
    }
    if depth > 2 {
        return;
    }
    match ty {
        Ty::Tuple(ts) => {
            for (i, c) in ts.iter().enumerate() {
                paths(&format!("(get #{i} {name})"), c, want, out, depth + 1);
            }
        }
        Ty::Vector(l, w) if l.ty() == *want => {
            for i in 0..*w {
                out.push(format!("(vget #{i} {name})"));
            }
        }
        _ => {}
    }
}

/// The scope of a `generate`'s function: the scalars and vectors in scope (which a function
/// with `let`s receives as arguments of its C function) and, innermost, its index `i`.
fn generate_env(env: &[Var], i: &str) -> Vec<Var> {
    let mut out: Vec<Var> = env
        .iter()
        .filter(|v| v.ty.is_scalar() || matches!(v.ty, Ty::Vector(..)))
        .cloned()
        .collect();
    out.push(Var {
        name: i.to_string(),
        ty: Ty::Int,
    });
    out
}

/// The value of size variable `name`, from the length of some array in scope.
fn env_size(env: &[Var], name: &str) -> Option<usize> {
    fn find(t: &Ty, name: &str) -> Option<usize> {
        match t {
            Ty::Array(e, n) | Ty::Exists(e, n) => {
                if n.text == name {
                    Some(n.val)
                } else {
                    find(e, name)
                }
            }
            Ty::Tuple(ts) => ts.iter().find_map(|t| find(t, name)),
            _ => None,
        }
    }
    env.iter().find_map(|v| find(&v.ty, name))
}
