//! Rule-level soundness of the rewrite engine, as a property test: random well-typed high-level
//! programs (maps of scalar functions, nested maps, zips, reductions with associative and
//! non-associative operators, split/join, transpose, slide, pad, matrix-product shapes) are
//! explored with each rule alone and with all rules, and every variant must type-check and
//! compute the interpreter's result of the original program.
//!
//! The rules are listed from the crate's rule sets, so a rule added later is tested without
//! touching this file, and the test fails when some rule is never exercised: a rule counts as
//! exercised on a program when adding it to a set of rules changes the variants, first to no
//! rule at all, and for rules that only matter after others (`map-fission` needs a `comp` that
//! only fusion makes, `stage-local` a tile) to all other rules, then to each other rule.
//!
//! Inputs are small integer-valued floats: sums and products stay exact or nearly so under any
//! association, so a reassociating rewrite is compared within a tight tolerance.

use ir::interp::{eval, Value};
use ir::rng::XorShift;
use ir::{Scalar, Type};
use rewrite::{explore, Exploration, Options};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Programs generated per run: enough to exercise every rule, few enough for a fast CI.
const PROGRAMS: usize = 150;
/// Input sets each variant is run on.
const INPUTS: u64 = 2;
/// `only_rules` entry that no rule name contains: exploration without any rule.
const NO_RULE: &str = "\u{1}no rule\u{1}";
/// Most elements a program may read and write (see `Gen::work`).
const WORK_BUDGET: i64 = 40_000;
/// Tuning factors of the split rules: small, so that the small test sizes can be split.
const SPLIT_FACTORS: [i64; 2] = [4, 16];
/// Work-group sizes and elements per work-item of the cooperative reductions: small, for the
/// same reason.
const WG_SIZES: [i64; 2] = [4, 8];
const WG_ITEMS: [i64; 1] = [4];
/// A transpose tile that the generated lengths (8 to 64) admit (a tile must be shorter than
/// both lengths).
const TRANSPOSE_TILES: [i64; 1] = [4];
/// Tiles of an array read whole by every work-item (`reuse-tiles-*`) that the generated
/// lengths admit.
const REUSE_TILES: [i64; 1] = [4];

/// Shapes the generator does not draw, checked after its programs (so that its draws, and the
/// programs every other rule is exercised on, stay as they were): each element against a whole
/// vector, reduced (`reuse-tiles-*`); a reduction of a row that is a tuple's component, which the
/// reader binds by `let`s (`let-reduce`, `let-map`).
const FIXED: [(&str, i64, i64); 9] = [
    (
        "(lift (N M) ((array-type float N) (array-type float M))
  (lambda (xs ws) (join (map (lambda (x) (reduce + 0.0f (map (lambda (w) (* (- w x) (- w x))) ws))) xs))))",
        32,
        16,
    ),
    (
        "(lift (N M) ((array-type float N) (array-type (array-type float M) N))
  (lambda (xs rows)
    (join (map (lambda (t) (reduce + 0.0f (map (lambda (v) (* v (get #0 t))) (get #1 t)))) (zip xs rows)))))",
        32,
        16,
    ),
    // mm with the rows of Bᵀ given, written without `join` (`reg-block-rows-*`): the
    // generator's products are joined
    (
        "(lift (N M) ((array-type (array-type float M) N) (array-type (array-type float M) N))
  (lambda (a bt) (map (lambda (r) (map (lambda (c) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip r c)))) bt)) a)))",
        16,
        8,
    ),
    // a dot product long enough for two float4s a work-item of the grid (`grid-reduce-v4-*`:
    // 2 · 2 groups · 8 · 4 = 128 elements); the generated lengths are shorter
    (
        "(lift (N M) ((array-type float N) (array-type float N))
  (lambda (xs ys) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))",
        136,
        1,
    ),
    // rows whose length no work-group size divides (`wg-reduce-pad-*`), a map of them that is
    // not zero at zero: the padding lanes are skipped
    (
        "(lift (N M) ((array-type (array-type float M) N))
  (lambda (a) (join (map (lambda (r) (reduce + 0.0f (map (lambda (x) (+ x 1.0f)) r))) a))))",
        3,
        13,
    ),
    // a batch of products, the right operand read through `transpose` of a tuple's component
    // (`batch-reg-block-*`, `bench/indep/bmm.lisp`): the generator draws no batches
    (
        "(lift (N M) ((array-type (array-type (array-type float M) M) N) (array-type (array-type (array-type float M) M) N))
  (lambda (as bs) (map (lambda (ab) (map (lambda (r) (map (lambda (c) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip r c)))) (transpose (get #1 ab)))) (get #0 ab))) (zip as bs))))",
        3,
        8,
    ),
    // scans (`rules::scan`): the generator draws none. A whole array with maps before and
    // after it, and rows scanned as they are and after a map
    (
        "(lift (N M) ((array-type float N))
  (lambda (xs) (map (lambda (y) (* 2.0f y)) (scan + 0.0f (map (lambda (x) (- x 1.0f)) xs)))))",
        40,
        1,
    ),
    (
        "(lift (N M) ((array-type (array-type float M) N))
  (lambda (a) (map (lambda (r) (scan + 0.0f r)) a)))",
        5,
        12,
    ),
    (
        "(lift (N M) ((array-type (array-type float M) N))
  (lambda (a) (map (lambda (r) (scan max -100.0f (map (lambda (x) (* x x)) r))) a)))",
        5,
        12,
    ),
];
/// Work-groups of the one-launch whole-array reductions: few, so that the generated lengths
/// (8 to 64) are at least two elements a work-item.
const GRID_GROUPS: [i64; 1] = [2];
/// A register-blocked product's tiles that the generated lengths admit: 4 × 8 tiles of 2 × 4
/// blocks over steps of 4 (a block's columns and the steps are whole `float4`s).
fn reg_blocks() -> Vec<rewrite::egraph::RegBlockSizes> {
    vec![rewrite::egraph::RegBlockSizes {
        tm: 4,
        tn: 8,
        rm: 2,
        rn: 4,
        tk: 4,
    }]
}

/// A batch element's product as one tile (`batch-reg-block-*`): 8 × 8 of 2 × 4 blocks over
/// steps of 4, named apart from `reg_blocks`'s (an `only_rules` filter selects by substring).
fn batch_blocks() -> Vec<rewrite::egraph::RegBlockSizes> {
    vec![rewrite::egraph::RegBlockSizes {
        tm: 8,
        tn: 8,
        rm: 2,
        rn: 4,
        tk: 4,
    }]
}

/// The shared generator, with weighted choices.
struct Rng(XorShift);

impl Rng {
    fn from_state(state: u64) -> Rng {
        Rng(XorShift::from_state(state))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0.pick(items)
    }

    /// An index drawn with the given weights.
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut r = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }
}

/// A symbolic length (LIFT size syntax) and its value under the chosen sizes.
#[derive(Clone, Debug)]
struct Len {
    text: String,
    val: i64,
}

impl Len {
    fn op(op: &str, a: &Len, b: &Len) -> Len {
        let val = match op {
            "+" => a.val + b.val,
            "-" => a.val - b.val,
            "*" => a.val * b.val,
            _ => a.val / b.val,
        };
        Len {
            text: format!("({op} {} {})", a.text, b.text),
            val,
        }
    }

    fn cst(v: i64) -> Len {
        Len {
            text: v.to_string(),
            val: v,
        }
    }
}

/// An expression of type `[..[float]dims[k]..]dims[0]` (outermost length first).
#[derive(Clone, Debug)]
struct Arr {
    text: String,
    dims: Vec<Len>,
}

const SCALAR_FNS: &[&str] = &[
    "(* X 2.0f)",
    "(+ X 1.0f)",
    "(- X 3.0f)",
    "(* X X)",
    "(max X 0.0f)",
    "(min X 1.0f)",
    "(+ (* X 3.0f) 1.0f)",
    "(* alpha X)",
    "(- X alpha)",
    "(abs X)",
    // not lane-wise: vectorization must leave these alone
    "(if (> X 0.0f) X 0.0f)",
    "(to-float (to-int (* X 0.5f)))",
];

const PAIR_FNS: &[&str] = &[
    "(* (get #0 P) (get #1 P))",
    "(+ (get #0 P) (get #1 P))",
    "(max (get #0 P) (get #1 P))",
    "(- (get #0 P) (* 2.0f (get #1 P)))",
];

/// Reduction operator and initial value; some are not associative or have a non-neutral initial
/// value, so partial reductions must not apply to them.
const REDUCTIONS: &[(&str, &str)] = &[
    ("+", "0.0f"),
    ("+", "0.0f"),
    ("(lambda (a b) (+ a b))", "0.0f"),
    ("*", "1.0f"),
    ("max", "-1000.0f"),
    ("(lambda (a b) (min a b))", "1000.0f"),
    ("+", "2.0f"),
    ("(lambda (a b) (+ a (* b b)))", "0.0f"),
    ("(lambda (a b) (- a b))", "0.0f"),
];

struct Gen {
    rng: Rng,
    /// The size variables, any of which a parameter's length may use.
    base: Vec<Len>,
    /// Extra parameters (zip partners, `alpha`): name and type.
    params: Vec<(String, String)>,
    fresh: usize,
    /// Elements read and written so far, each stage counted as often as enclosing maps run it.
    work: i64,
    /// How often the stage being generated runs (the product of the enclosing maps' lengths).
    scale: i64,
}

fn elements(e: &Arr) -> i64 {
    e.dims.iter().map(|d| d.val).product()
}

impl Gen {
    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn scalar_fn(&mut self) -> String {
        let x = self.name("x");
        let body = self.rng.pick(SCALAR_FNS).replace('X', &x);
        if body.contains("alpha") && !self.params.iter().any(|(n, _)| n == "alpha") {
            self.params.push(("alpha".into(), "float".into()));
        }
        format!("(lambda ({x}) {body})")
    }

    /// The length of another input: mostly the larger size, which every tile factor splits.
    fn other_len(&mut self) -> Len {
        self.base[if self.rng.below(4) == 0 { 1 } else { 0 }].clone()
    }

    /// A parameter of type `[..[float]dims[k]..]dims[0]`, reused when one exists.
    fn partner(&mut self, dims: &[Len]) -> String {
        let ty = dims
            .iter()
            .rev()
            .fold("float".to_string(), |t, d| format!("(array-type {t} {})", d.text));
        if let Some((n, _)) = self.params.iter().find(|(_, t)| *t == ty) {
            return n.clone();
        }
        let n = format!("ys{}", self.params.len());
        self.params.push((n.clone(), ty));
        n
    }

    fn reduce(&mut self, x: &str, len: &Len) -> Arr {
        let (mut f, mut z) = *self.rng.pick(REDUCTIONS);
        // products of long arrays would overflow
        if f == "*" && len.val > 8 {
            (f, z) = ("+", "0.0f");
        }
        Arr {
            text: format!("(reduce {f} {z} {x})"),
            dims: vec![Len::cst(1)],
        }
    }

    /// Every element of `e` through one scalar function (nested maps for nested arrays).
    fn map_all(&mut self, e: &Arr) -> Arr {
        if e.dims.len() == 1 {
            let f = self.scalar_fn();
            return Arr {
                text: format!("(map {f} {})", e.text),
                dims: e.dims.clone(),
            };
        }
        let r = self.name("r");
        let inner = self.map_all(&Arr {
            text: r.clone(),
            dims: e.dims[1..].to_vec(),
        });
        Arr {
            text: format!("(map (lambda ({r}) {}) {})", inner.text, e.text),
            dims: e.dims.clone(),
        }
    }

    /// `(map (λp. op (get 0 p) (get 1 p)) (zip a b))` in either order.
    fn zip_with(&mut self, a: &str, b: &str) -> String {
        let p = self.name("p");
        let body = self.rng.pick(PAIR_FNS).replace('P', &p);
        let zip = if self.rng.below(2) == 0 {
            format!("(zip {a} {b})")
        } else {
            format!("(zip {b} {a})")
        };
        format!("(map (lambda ({p}) {body}) {zip})")
    }

    /// One random stage applied to `e`; the result has at most `max_rank` dimensions.
    fn stage(&mut self, e: &Arr, max_rank: usize) -> Arr {
        let out = match e.dims.len() {
            1 => self.stage1(e, max_rank),
            _ => self.stage_nested(e, max_rank),
        };
        self.work += self.scale * (elements(e) + elements(&out));
        out
    }

    fn stage1(&mut self, e: &Arr, max_rank: usize) -> Arr {
        let n = e.dims[0].clone();
        let divisors: Vec<i64> = [2, 4, 8, 16]
            .into_iter()
            .filter(|k| n.val % k == 0 && n.val > *k)
            .collect();
        let can_split = !divisors.is_empty();
        let nested = max_rank >= 2;
        // map, zip, reduce, chunked reduce, split, slide, pad, reverse, join∘split, outer product
        let weights = [
            5,
            3,
            if n.val > 1 { 2 } else { 0 },
            if can_split { 2 } else { 0 },
            if can_split && nested { 2 } else { 0 },
            if nested && n.val >= 4 { 1 } else { 0 },
            1,
            1,
            if can_split { 1 } else { 0 },
            if nested { 1 } else { 0 },
        ];
        let same = |text: String| Arr {
            text,
            dims: vec![n.clone()],
        };
        match self.rng.weighted(&weights) {
            0 => self.map_all(e),
            1 => {
                let ys = self.partner(std::slice::from_ref(&n));
                let text = self.zip_with(&e.text, &ys);
                same(text)
            }
            2 => self.reduce(&e.text, &n),
            3 => {
                let k = *self.rng.pick(&divisors);
                let c = self.name("c");
                let r = self.reduce(&c, &Len::cst(k));
                Arr {
                    text: format!("(join (map (lambda ({c}) {}) (split #{k} {})))", r.text, e.text),
                    dims: vec![Len::op("*", &Len::op("/", &n, &Len::cst(k)), &Len::cst(1))],
                }
            }
            4 => {
                let k = *self.rng.pick(&divisors);
                Arr {
                    text: format!("(split #{k} {})", e.text),
                    dims: vec![Len::op("/", &n, &Len::cst(k)), Len::cst(k)],
                }
            }
            5 => {
                let s = 2 + self.rng.below(2) as i64;
                let t = if (n.val - s) % 2 == 0 && self.rng.below(2) == 0 {
                    2
                } else {
                    1
                };
                let (s_, t_) = (Len::cst(s), Len::cst(t));
                Arr {
                    text: format!("(slide #{s} #{t} {})", e.text),
                    dims: vec![Len::op("/", &Len::op("+", &Len::op("-", &n, &s_), &t_), &t_), s_],
                }
            }
            6 => {
                let (l, r) = (self.rng.below(3) as i64, self.rng.below(3) as i64);
                let text = if self.rng.below(2) == 0 {
                    format!("(pad #{l} #{r} 0.0f {})", e.text)
                } else {
                    format!("(pad-clamp #{l} #{r} {})", e.text)
                };
                Arr {
                    text,
                    dims: vec![Len::op("+", &Len::op("+", &Len::cst(l), &n), &Len::cst(r))],
                }
            }
            7 => same(format!("(reverse {})", e.text)),
            8 => {
                let k = *self.rng.pick(&divisors);
                Arr {
                    text: format!("(join (split #{k} {}))", e.text),
                    dims: vec![Len::op("*", &Len::op("/", &n, &Len::cst(k)), &Len::cst(k))],
                }
            }
            _ => {
                // every element against every element of another vector: a map over a map whose
                // array does not depend on the outer element
                let k = self.other_len();
                let ys = self.partner(std::slice::from_ref(&k));
                let (x, y) = (self.name("x"), self.name("y"));
                let op = self.rng.pick(&["*", "+", "max", "-"]);
                Arr {
                    text: format!(
                        "(map (lambda ({x}) (map (lambda ({y}) ({op} {x} {y})) {ys})) {})",
                        e.text
                    ),
                    dims: vec![n, k],
                }
            }
        }
    }

    fn stage_nested(&mut self, e: &Arr, max_rank: usize) -> Arr {
        let (n, rest) = (e.dims[0].clone(), e.dims[1..].to_vec());
        let flat = rest.len() == 1;
        // map over rows, transpose, join, per-row reduction, rows against rows of another matrix
        let weights = [
            4,
            if flat { 1 } else { 0 },
            2,
            if flat { 1 } else { 0 },
            if flat { 3 } else { 0 },
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let r = self.name("r");
                let mut inner = Arr {
                    text: r.clone(),
                    dims: rest,
                };
                self.scale *= n.val;
                for _ in 0..1 + self.rng.below(2) {
                    inner = self.stage(&inner, max_rank - 1);
                }
                self.scale /= n.val;
                let mut dims = vec![n];
                dims.extend(inner.dims);
                Arr {
                    text: format!("(map (lambda ({r}) {}) {})", inner.text, e.text),
                    dims,
                }
            }
            1 => Arr {
                text: format!("(transpose {})", e.text),
                dims: vec![rest[0].clone(), n],
            },
            2 => {
                let mut dims = vec![Len::op("*", &n, &rest[0])];
                dims.extend(rest[1..].iter().cloned());
                Arr {
                    text: format!("(join {})", e.text),
                    dims,
                }
            }
            3 => {
                let r = self.name("r");
                let red = self.reduce(&r, &rest[0]);
                Arr {
                    text: format!("(join (map (lambda ({r}) {}) {}))", red.text, e.text),
                    dims: vec![Len::op("*", &n, &Len::cst(1))],
                }
            }
            _ => {
                // matrix-product shape: each row against each row of `ws` (or column of a
                // transposed one), as a dot product (joined) or element-wise (nested)
                let m = rest[0].clone();
                let k = self.other_len();
                let ws = if self.rng.below(2) == 0 {
                    self.partner(&[k.clone(), m.clone()])
                } else {
                    format!("(transpose {})", self.partner(&[m.clone(), k.clone()]))
                };
                let (r, c) = (self.name("r"), self.name("c"));
                let pairs = self.zip_with(&r, &c);
                self.work += self.scale * n.val * k.val * m.val;
                if max_rank >= 3 && self.rng.below(3) == 0 {
                    Arr {
                        text: format!("(map (lambda ({r}) (map (lambda ({c}) {pairs}) {ws})) {})", e.text),
                        dims: vec![n, k, rest[0].clone()],
                    }
                } else {
                    let red = self.reduce(&pairs, &rest[0]);
                    Arr {
                        text: format!(
                            "(map (lambda ({r}) (join (map (lambda ({c}) {}) {ws}))) {})",
                            red.text, e.text
                        ),
                        dims: vec![n, Len::op("*", &k, &Len::cst(1))],
                    }
                }
            }
        }
    }
}

/// A random program and the concrete sizes it is run with; programs too slow to interpret
/// dozens of times are drawn again.
fn program(seed: u64) -> (String, BTreeMap<String, i64>) {
    (0u64..)
        .find_map(|attempt| {
            program_within(Rng::from_state(
                (seed * 1000 + attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            ))
        })
        .expect("some program fits")
}

fn program_within(mut rng: Rng) -> Option<(String, BTreeMap<String, i64>)> {
    let n = Len {
        text: "N".into(),
        val: *rng.pick(&[32i64, 64]),
    };
    let m = Len {
        text: "M".into(),
        val: *rng.pick(&[8i64, 16]),
    };
    let mut g = Gen {
        rng,
        base: vec![n.clone(), m.clone()],
        params: vec![],
        fresh: 0,
        work: 0,
        scale: 1,
    };
    let dims = if g.rng.below(2) == 0 { vec![n, m] } else { vec![n] };
    let main_ty = g.partner(&dims);
    let mut e = Arr { text: main_ty, dims };
    for _ in 0..1 + g.rng.below(4) {
        e = g.stage(&e, 3);
    }
    // a program that only rearranges its input has nothing to explore
    if !e.text.contains("(map ") && !e.text.contains("(reduce ") {
        e = g.map_all(&e);
    }
    if g.work > WORK_BUDGET {
        return None;
    }
    let names: Vec<&str> = g.params.iter().map(|(n, _)| n.as_str()).collect();
    let types: Vec<&str> = g.params.iter().map(|(_, t)| t.as_str()).collect();
    let used: Vec<&Len> = g
        .base
        .iter()
        .filter(|l| types.iter().any(|t| t.contains(&l.text)))
        .collect();
    let src = format!(
        "(lift\n  ({})\n  ({})\n  (lambda ({})\n    {}))\n",
        used.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" "),
        types.join(" "),
        names.join(" "),
        e.text
    );
    Some((src, used.iter().map(|l| (l.text.clone(), l.val)).collect()))
}

/// Integer-valued floats in [-2, 2].
fn random(t: &Type, sizes: &BTreeMap<String, i64>, rng: &mut Rng) -> Value {
    match t {
        Type::Scalar(Scalar::Float) => Value::Float(rng.below(5) as f32 - 2.0),
        Type::Array(e, n) => {
            let n = n.eval(&|v| sizes.get(v).copied()).expect("parameter length");
            Value::Array((0..n).map(|_| random(e, sizes, rng)).collect())
        }
        other => panic!("no random values of type {other}"),
    }
}

fn finite(v: &Value) -> bool {
    match v {
        Value::Float(x) => x.is_finite(),
        Value::Double(x) => x.is_finite(),
        Value::Array(xs) | Value::Tuple(xs) | Value::Vector(xs) => xs.iter().all(finite),
        _ => true,
    }
}

fn close(a: &Value, b: &Value) -> bool {
    ir::interp::approx_eq(a, b, 1e-4)
}

fn short(v: &Value) -> String {
    let s = format!("{v:?}");
    if s.len() > 400 {
        format!("{}…", &s[..s.char_indices().nth(400).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

/// One accepted program with its inputs and the interpreter's results on them.
struct Case {
    src: String,
    prog: ir::Program,
    info: typeck::TypeInfo,
    sizes: BTreeMap<String, i64>,
    runs: Vec<(Vec<Value>, Value)>,
    /// Variant sources already checked (most explorations share most of their variants).
    checked: RefCell<BTreeSet<String>>,
}

/// Sorted names of a set of rules.
type RuleSet = BTreeSet<String>;

impl Case {
    /// Explores with exactly `rules` (all rules when `None`) and checks every variant; the
    /// variants' sources.
    fn explore(&self, rules: Option<&RuleSet>, failures: &mut Vec<String>) -> BTreeSet<String> {
        let (label, only_rules) = match rules {
            None => ("all rules".to_string(), vec![]),
            Some(r) if r.is_empty() => ("no rule".to_string(), vec![NO_RULE.to_string()]),
            Some(r) => (format!("{r:?}"), r.iter().cloned().collect()),
        };
        let opts = Options {
            split_factors: SPLIT_FACTORS.to_vec(),
            wg_sizes: WG_SIZES.to_vec(),
            wg_items: WG_ITEMS.to_vec(),
            transpose_tiles: TRANSPOSE_TILES.to_vec(),
            reuse_tiles: REUSE_TILES.to_vec(),
            grid_groups: GRID_GROUPS.to_vec(),
            reg_blocks: reg_blocks(),
            batch_blocks: batch_blocks(),
            sizes: self.sizes.clone(),
            top_k: 1000,
            only_rules,
            // rules one at a time see the programs as generated (normalisation would take the
            // spellings some rules are for, `let-reduce`'s say, away from them); full
            // explorations see them normalised, as `lift` does
            normalise: rules.is_none(),
            ..Options::default()
        };
        let ex: Exploration = match explore(&self.prog, &self.info, &opts) {
            Ok(ex) => ex,
            Err(d) => {
                failures.push(format!(
                    "[{label}] exploration failed ({}) although the program compiles:\n{}",
                    d.message, self.src
                ));
                return BTreeSet::new();
            }
        };
        for v in &ex.variants {
            if !self.checked.borrow_mut().insert(v.source.clone()) {
                continue;
            }
            if let Err(why) = self.check_variant(v) {
                failures.push(format!(
                    "[{label}] unsound variant: {why}\nprogram (sizes {:?}):\n{}variant ({}):\n{}",
                    self.sizes, self.src, v.description, v.source
                ));
            }
        }
        ex.variants.into_iter().map(|v| v.source).collect()
    }

    fn check_variant(&self, v: &rewrite::Variant) -> Result<(), String> {
        // the program as `lift` receives it, and the same program read back from its text
        let p = &v.program;
        let again = ir::parse(&v.source).map_err(|d| format!("its text does not parse: {}", d.message))?;
        let again_info = typeck::infer(&again).map_err(|d| format!("its text does not type-check: {}", d.message))?;
        typeck::infer(p).map_err(|d| format!("does not type-check: {}", d.message))?;
        validate::validate(p, &v.info).map_err(|ds| format!("is not valid: {}", ds[0].message))?;
        let plan = codegen_opencl::emit(p, &v.info)
            .map_err(|d| format!("passes validation but code generation refuses it: {}", d.message))?;
        // the tuning cache keeps the text: it must compile to the same kernels
        let from_text = codegen_opencl::emit(&again, &again_info)
            .map_err(|d| format!("its text does not compile: {}", d.message))?;
        if from_text.source != plan.source {
            return Err(format!(
                "its text compiles to other kernels:\n{}\ninstead of\n{}",
                from_text.source, plan.source
            ));
        }
        let lookup = |n: &str| self.sizes.get(n).copied();
        for (args, expect) in &self.runs {
            let got = eval(p, args, &lookup).map_err(|e| format!("fails to run: {}", e.message))?;
            if !close(expect, &got) {
                return Err(format!(
                    "result differs\nexpected {}\n     got {}",
                    short(expect),
                    short(&got)
                ));
            }
        }
        Ok(())
    }
}

/// Generated programs that parse, type-check, compile and give finite results.
fn cases() -> Vec<Case> {
    let mut out = vec![];
    let mut rejected = vec![];
    let fixed = FIXED.iter().map(|(src, n, m)| {
        let sizes: BTreeMap<String, i64> = [("N".to_string(), *n), ("M".to_string(), *m)].into();
        (src.to_string(), sizes)
    });
    for (seed, (src, sizes)) in (0..PROGRAMS as u64).map(program).chain(fixed).enumerate() {
        let seed = seed as u64;
        let prog = match ir::parse(&src) {
            Ok(p) => p,
            Err(d) => {
                rejected.push(format!("parse: {}\n{src}", d.message));
                continue;
            }
        };
        let info = match typeck::infer(&prog) {
            Ok(i) => i,
            Err(d) => {
                rejected.push(format!("types: {}\n{src}", d.message));
                continue;
            }
        };
        if validate::validate(&prog, &info).is_err() || codegen_opencl::emit(&prog, &info).is_err() {
            rejected.push(format!("does not compile\n{src}"));
            continue;
        }
        let lookup = |n: &str| sizes.get(n).copied();
        let mut runs = vec![];
        for input in 0..INPUTS {
            let mut rng = Rng::from_state(0x5eed_0000 + seed * 31 + input);
            let args: Vec<Value> = prog.params.iter().map(|p| random(&p.ty, &sizes, &mut rng)).collect();
            match eval(&prog, &args, &lookup) {
                Ok(v) if finite(&v) => runs.push((args, v)),
                Ok(_) => rejected.push(format!("non-finite result\n{src}")),
                Err(e) => rejected.push(format!("run: {}\n{src}", e.message)),
            }
        }
        if runs.is_empty() {
            continue;
        }
        out.push(Case {
            src,
            prog,
            info,
            sizes,
            runs,
            checked: RefCell::default(),
        });
    }
    // a generator that mostly fails would make every check below vacuous
    assert!(
        out.len() * 10 >= PROGRAMS * 9,
        "only {} of {PROGRAMS} generated programs are usable; rejected:\n{}",
        out.len(),
        rejected.join("\n")
    );
    out
}

/// Names of all rules of all phases.
fn rule_names() -> RuleSet {
    let opts = Options {
        split_factors: SPLIT_FACTORS.to_vec(),
        wg_sizes: WG_SIZES.to_vec(),
        wg_items: WG_ITEMS.to_vec(),
        transpose_tiles: TRANSPOSE_TILES.to_vec(),
        reuse_tiles: REUSE_TILES.to_vec(),
        grid_groups: GRID_GROUPS.to_vec(),
        reg_blocks: reg_blocks(),
        batch_blocks: batch_blocks(),
        ..Options::default()
    };
    let rules = [
        rewrite::rules::algorithmic_rules(&opts),
        rewrite::rules::tiling_rules(&opts),
        rewrite::rules::wg_reduce_rules(&opts),
        rewrite::rules::workgroup_rules(&opts),
        rewrite::rules::sequential_rules(&opts),
    ];
    let names: RuleSet = rules.iter().flatten().map(|r| r.name.to_string()).collect();
    assert!(names.iter().all(|n| !n.contains(NO_RULE)));
    names
}

/// The rules that an `only_rules` filter listing `set` runs (names containing one of `set`).
fn closure(all: &RuleSet, set: &RuleSet) -> RuleSet {
    all.iter()
        .filter(|n| set.iter().any(|s| n.contains(s.as_str())))
        .cloned()
        .collect()
}

fn report(failures: &[String]) -> String {
    let mut s = format!("{} failure(s)\n", failures.len());
    for f in failures.iter().take(5) {
        let _ = writeln!(s, "\n{f}");
    }
    s
}

/// Variant sources of every (program, exact rule set) explored so far; every exploration also
/// checks its variants.
struct Explorer<'a> {
    cases: &'a [Case],
    all: RuleSet,
    memo: BTreeMap<(usize, RuleSet), BTreeSet<String>>,
    failures: Vec<String>,
    runs: usize,
}

impl Explorer<'_> {
    fn variants(&mut self, case: usize, rules: &RuleSet) -> BTreeSet<String> {
        if let Some(v) = self.memo.get(&(case, rules.clone())) {
            return v.clone();
        }
        self.runs += 1;
        let v = self.cases[case].explore(Some(rules), &mut self.failures);
        self.memo.insert((case, rules.clone()), v.clone());
        v
    }

    /// Whether adding `rule` to the rules that `base` selects changes the variants of `case`;
    /// `None` when no filter can select that set without `rule` (a name it contains is there).
    fn matters(&mut self, case: usize, rule: &str, base: &RuleSet) -> Option<bool> {
        let mut with = base.clone();
        with.insert(rule.to_string());
        let with = closure(&self.all, &with);
        let mut without = with.clone();
        without.remove(rule);
        if closure(&self.all, &without) != without {
            return None;
        }
        Some(self.variants(case, &with) != self.variants(case, &without))
    }
}

#[test]
fn every_rule_preserves_the_interpreters_result_and_is_exercised() {
    let cases = cases();
    let all = rule_names();
    let mut ex = Explorer {
        cases: &cases,
        all: all.clone(),
        memo: BTreeMap::new(),
        failures: vec![],
        runs: 0,
    };
    let mut alone: BTreeMap<&str, usize> = all.iter().map(|n| (n.as_str(), 0)).collect();
    for case in 0..cases.len() {
        for name in &all {
            if ex.matters(case, name, &RuleSet::new()) == Some(true) {
                *alone.get_mut(name.as_str()).expect("rule") += 1;
            }
        }
    }
    // Rules that only matter after others: within the full set, then with one other rule.
    let mut with_others: BTreeMap<&str, String> = BTreeMap::new();
    for name in all.iter().filter(|n| alone[n.as_str()] == 0) {
        let others: RuleSet = all.iter().filter(|o| *o != name).cloned().collect();
        let contexts = [others.clone()]
            .into_iter()
            .chain(others.iter().map(|o| RuleSet::from([o.clone()])));
        'search: for context in contexts {
            for case in 0..cases.len() {
                if ex.matters(case, name, &context) == Some(true) {
                    let label = if context.len() == 1 {
                        format!("{context:?}")
                    } else {
                        "all rules".into()
                    };
                    with_others.insert(name, label);
                    break 'search;
                }
            }
        }
    }
    assert!(ex.failures.is_empty(), "{}", report(&ex.failures));
    let idle: Vec<&str> = all
        .iter()
        .map(String::as_str)
        .filter(|n| alone[n] == 0 && !with_others.contains_key(n))
        .collect();
    assert!(
        idle.is_empty(),
        "rules never exercised on {} programs: {idle:?}\nprograms each rule changed alone: {alone:?}",
        cases.len()
    );
    eprintln!(
        "{} programs, {} rules, {} explorations; programs each rule changed alone: {alone:?}; \
         rules that need another: {with_others:?}",
        cases.len(),
        all.len(),
        ex.runs
    );
}

#[test]
fn full_explorations_preserve_the_interpreters_result() {
    let cases = cases();
    let mut failures = vec![];
    let mut variants = 0;
    for case in &cases {
        variants += case.explore(None, &mut failures).len();
    }
    assert!(failures.is_empty(), "{}", report(&failures));
    // each program has at least its plain lowering; rewrites must add more on average
    assert!(
        variants >= 2 * cases.len(),
        "{variants} variants for {} programs",
        cases.len()
    );
}
