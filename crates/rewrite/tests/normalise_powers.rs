//! Two normalisations of `normalise`, each on two formulations: small constant powers are
//! products (`pow x 2`, `pow x 3`, `pow x 1.5`), and a zip's component that no `get` reads is
//! left out of the zip.

use ir::interp::{eval, Value};
use rewrite::{encode, normalise};
use std::collections::BTreeMap;

fn typed(src: &str) -> (ir::Program, typeck::TypeInfo) {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    (prog, info)
}

/// The normal form's text, after checking it computes what the original computes on `args`.
fn normal(src: &str, sizes: &[(&str, i64)], args: &[Value]) -> String {
    let (prog, info) = typed(src);
    let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let lookup = |n: &str| sizes.get(n).copied();
    let expect = eval(&prog, args, &lookup).expect("the original runs");
    let (prog, _) = normalise::normalise(&prog, &info).unwrap_or((prog, info));
    let got = eval(&prog, args, &lookup).expect("the normal form runs");
    let text = encode::subtree_text(&prog, &encode::canonical_names(&prog), prog.body);
    let close = |a: &Value, b: &Value| match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.iter().zip(y).all(|(x, y)| match (x, y) {
            (Value::Float(x), Value::Float(y)) => (x - y).abs() <= 1e-5 * x.abs().max(1.0),
            _ => x == y,
        }),
        _ => a == b,
    };
    assert!(close(&expect, &got), "{text}");
    text
}

fn floats(xs: &[f32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())
}

#[test]
fn small_constant_powers_are_products() {
    let xs = floats(&[-2.0, 0.0, 0.5, 3.0]);
    // squares and cubes of an expression and of a variable, negative bases included
    let n = normal(
        "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (+ (pow (- x 1.0f) 2.0f) (pow x 3.0f))) xs)))",
        &[("N", 4)],
        std::slice::from_ref(&xs),
    );
    assert!(!n.contains("pow") && n.contains('*'), "{n}");
    // a power of one and a half in a reduction (n-body's distance), and a power that stays
    let pos = floats(&[1.0, 4.0, 9.0, 0.25]);
    let n = normal(
        "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f (map (lambda (x) (+ (/ 1.0f (pow (+ x 1.0f) 1.5f)) (pow x 0.5f))) xs))))",
        &[("N", 4)],
        &[pos],
    );
    assert!(n.contains("sqrt") && n.matches("pow").count() == 1, "{n}");
}

#[test]
fn a_zip_component_no_get_reads_is_left_out() {
    let (a, b, c) = (floats(&[1.0, 2.0]), floats(&[3.0, 4.0]), floats(&[5.0, 6.0]));
    let head = "(lift (N) ((array-type float N) (array-type float N) (array-type float N)) (lambda (a b c) ";
    // the middle of three unread: a zip of two
    let n = normal(
        &format!("{head}(map (lambda (t) (* (get #0 t) (get #2 t))) (zip a b c))))"),
        &[("N", 2)],
        &[a.clone(), b.clone(), c.clone()],
    );
    let two = normal(
        &format!("{head}(map (lambda (t) (* (get #0 t) (get #1 t))) (zip a c))))"),
        &[("N", 2)],
        &[a.clone(), b.clone(), c.clone()],
    );
    assert_eq!(n, two);
    // one left, in a reduction: the array itself
    let n = normal(
        &format!("{head}(reduce + 0.0f (map (lambda (t) (* 2.0f (get #1 t))) (zip a b c)))))"),
        &[("N", 2)],
        &[a, b, c],
    );
    assert!(!n.contains("zip"), "{n}");
}
