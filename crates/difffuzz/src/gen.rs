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
mod host;
mod ints;
mod scalar;
mod scans;
mod seq;
mod shaped;

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

    /// Whether a run-time length (a filter result) is anywhere in this type.
    fn holds_exists(&self) -> bool {
        match self {
            Ty::Exists(..) => true,
            Ty::Array(e, _) => e.holds_exists(),
            Ty::Tuple(ts) => ts.iter().any(Ty::holds_exists),
            Ty::Float | Ty::Double | Ty::Int | Ty::Bool | Ty::Vector(..) => false,
        }
    }

    /// Whether a filter may keep elements of this type: flat ones, rows of them, and tuples of
    /// those (stored as one buffer per component).
    fn filterable(&self) -> bool {
        match self {
            Ty::Array(e, _) => e.flat(),
            Ty::Tuple(ts) => ts.iter().all(Ty::filterable),
            Ty::Float | Ty::Double | Ty::Int | Ty::Bool | Ty::Vector(..) => true,
            Ty::Exists(..) => false,
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
        params.push((ARRAY_PARAMS[0].into(), first));
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
            params.push((ARRAY_PARAMS[k + 1].to_string(), ty));
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
            // A tuple of whole results (filter results among them, each with its own length).
            2 if self.chance(30) => {
                let a = self.host(&env, 1);
                let b = if self.chance(50) {
                    self.high_level(&env)
                } else {
                    self.host(&env, 1)
                };
                if self.chance(25) {
                    // The pair bound by `let` and taken apart (a filter result's component gets
                    // a binder of its own, `rewrite::normalise::split_tuple_lets`).
                    let t = self.name("tp");
                    let k = self.rng.below(2);
                    format!("(let {t} (tuple {a} {b}) (get #{k} {t}))")
                } else {
                    format!("(tuple {a} {b})")
                }
            }
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
            // computed elements of every type: a vector view of them must take their type; a
            // tuple is generated component by component
            let pair = Ty::Tuple(vec![Ty::Float, Ty::Int]);
            let et = self.pick(&[Ty::Float, Ty::Float, Ty::Int, Ty::Double, pair]);
            let f = self.value(&et, &ienv, 2);
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
                    if elem.flat() {
                        // a tuple fill pads each component with its part
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
                        let pair = Ty::Tuple(vec![Ty::Int, Ty::Float]);
                        let et = self.pick(&[Ty::Int, Ty::Int, Ty::Float, pair]);
                        let f = self.value(&et, &ienv, 1);
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

/// The names of the program's parameters (no generated name is one of them: those end in a
/// number).
const ARRAY_PARAMS: [&str; 3] = ["xs", "ys", "zs"];

/// The scope of a `generate`'s function: the scalars and vectors in scope, the arrays of fixed
/// lengths (the program's parameters and arrays made in the kernel, whose buffers and indices a
/// function with `let`s or `at` receives as arguments of its C function) and, innermost, its
/// index `i`.
fn generate_env(env: &[Var], i: &str) -> Vec<Var> {
    let mut out: Vec<Var> = env
        .iter()
        .filter(|v| {
            v.ty.is_scalar() || matches!(v.ty, Ty::Vector(..)) || matches!(v.ty, Ty::Array(..)) && !v.ty.holds_exists()
        })
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
