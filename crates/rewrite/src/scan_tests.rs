//! The scan rules (`rules::scan`), each on two formulations of its program: the variant it
//! makes appears (and is the cost model's choice where it should be), and every variant equals
//! the interpreter's result of the original.

use crate::{explore, Exploration, Options};
use ir::interp::{approx_eq, eval, Value};
use std::collections::BTreeMap;

fn sizes(s: &[(&str, i64)]) -> BTreeMap<String, i64> {
    s.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn explore_at(src: &str, at: &[(&str, i64)]) -> Exploration {
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = Options {
        sizes: sizes(at),
        ..Options::default()
    };
    explore(&prog, &info, &opts).expect("explores")
}

/// Deterministic inputs: element `i` of a flattened parameter is `(i * 7 % 13) - 6` (small
/// integers, so float sums are exact in every order).
fn inputs(prog: &ir::Program, at: &BTreeMap<String, i64>) -> Vec<Value> {
    fn value(t: &ir::Type, at: &BTreeMap<String, i64>, i: &mut i64) -> Value {
        match t {
            ir::Type::Array(e, n) => {
                let n = n.eval(&|v| at.get(v).copied()).expect("size");
                Value::Array((0..n).map(|_| value(e, at, i)).collect())
            }
            ir::Type::Scalar(ir::Scalar::Int) => {
                *i += 1;
                Value::Int((*i * 7 % 13 - 6) as i32)
            }
            _ => {
                *i += 1;
                Value::Float((*i * 7 % 13 - 6) as f32)
            }
        }
    }
    let mut i = 0;
    prog.params.iter().map(|p| value(&p.ty, at, &mut i)).collect()
}

/// Every variant at the small sizes `at` equals the original on the interpreter.
fn sound(src: &str, at: &[(&str, i64)]) -> Exploration {
    let ex = explore_at(src, at);
    let prog = ir::parse(src).expect("parses");
    let at = sizes(at);
    let args = inputs(&prog, &at);
    let lookup = |n: &str| at.get(n).copied();
    let expect = eval(&prog, &args, &lookup).expect("original runs");
    assert!(!ex.variants.is_empty(), "no variants:\n{ex}");
    for v in &ex.variants {
        let p = ir::parse(&v.source).unwrap_or_else(|e| panic!("{}: {e:?}", v.source));
        let got = eval(&p, &args, &lookup).unwrap_or_else(|e| panic!("{}: {e:?}", v.source));
        assert!(approx_eq(&expect, &got, 1e-6), "variant differs:\n{}", v.source);
    }
    ex
}

fn best(ex: &Exploration) -> &str {
    &ex.variants[0].description
}

const WHOLE: [&str; 2] = [
    "(lift (N) ((array-type float N)) (lambda (xs) (scan + 0.0f xs)))",
    "(define (plus a b) (+ b a))\n(lift (N) ((array-type float N)) (lambda (xs) (o (scan plus 0.0f) xs)))",
];

#[test]
fn scan_glb_scans_a_whole_array_in_one_launch() {
    for src in WHOLE {
        sound(src, &[("N", 40)]);
        let ex = explore_at(src, &[("N", 1 << 28)]);
        assert!(best(&ex).contains("scanGlb over"), "{ex}");
        assert!(ex.variants[0].source.contains("(scanGlb"), "{ex}");
    }
}

#[test]
fn scan_glb_reads_the_map_before_it_inline() {
    for src in [
        "(lift (N) ((array-type int N)) (lambda (xs) (scan + 0 (map (lambda (x) (* 3 x)) xs))))",
        "(lift (N) ((array-type int N)) (lambda (xs) (let ys (map (lambda (x) (* 3 x)) xs) (scan (lambda (a b) (+ a b)) 0 ys))))",
    ] {
        sound(src, &[("N", 40)]);
        let ex = explore_at(src, &[("N", 1 << 28)]);
        assert!(best(&ex).contains("map fused before scanGlb"), "{ex}");
        assert!(!ex.variants[0].source.contains("(let"), "{ex}");
    }
}

#[test]
fn scan_map_after_applies_the_map_as_the_scan_stores() {
    for src in [
        "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (y) (* 2.0f y)) (scan max -100.0f xs))))",
        "(lift (N) ((array-type float N)) (lambda (xs) (o (map (lambda (y) (- y 1.0f))) (scan + 0.0f) xs)))",
    ] {
        sound(src, &[("N", 40)]);
        let ex = explore_at(src, &[("N", 1 << 28)]);
        assert!(best(&ex).contains("map fused after scanGlb"), "{ex}");
        assert!(!ex.variants[0].source.contains("(let"), "{ex}");
    }
}

const ROWS: [&str; 2] = [
    "(lift (N M) ((array-type (array-type float M) N)) (lambda (xss) (map (lambda (r) (scan + 0.0f r)) xss)))",
    "(lift (N M) ((array-type (array-type float M) N)) (lambda (xss) (map (scan + 0.0f) xss)))",
];

#[test]
fn scan_rows_scans_long_rows_in_one_launch_and_short_rows_one_a_work_item() {
    for src in ROWS {
        sound(src, &[("N", 6), ("M", 20)]);
        let long = explore_at(src, &[("N", 32768), ("M", 8192)]);
        assert!(best(&long).contains("rows of 8192 in one launch"), "{long}");
        let short = explore_at(src, &[("N", 300), ("M", 10)]);
        assert!(!best(&short).contains("in one launch"), "{short}");
        assert!(short.variants[0].source.contains("scanSeq"), "{short}");
    }
}

#[test]
fn scan_rows_map_reads_each_rows_map_inline() {
    for src in [
        "(lift (N M) ((array-type (array-type float M) N)) (lambda (xss) (map (lambda (r) (scan + 0.0f (map (lambda (x) (* x x)) r))) xss)))",
        "(define (sq x) (* x x))\n(lift (N M) ((array-type (array-type float M) N)) (lambda (xss) (map (lambda (r) (o (scan + 0.0f) (map sq) r)) xss)))",
    ] {
        sound(src, &[("N", 6), ("M", 20)]);
        let ex = explore_at(src, &[("N", 32768), ("M", 8192)]);
        assert!(best(&ex).contains("rows of 8192 in one launch"), "{ex}");
        assert!(ex.variants[0].source.contains("(scanGlb"), "{ex}");
    }
}
