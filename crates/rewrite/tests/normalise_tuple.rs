//! `normalise_tuple`: two reductions of one array are one reduction of pairs (the normal form),
//! and a reduction of pairs combined component by component has its two reductions as the
//! alternative that exploration saturates too; each on at least two formulations, each checked
//! against the interpreter, and the cost model's choice between the sides at two sizes.

use ir::interp::{eval, Value};
use ir::rng::XorShift;
use ir::{Scalar, Type};
use rewrite::{encode, explore, normalise, Options};
use std::collections::BTreeMap;

fn typed(src: &str) -> (ir::Program, typeck::TypeInfo) {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    (prog, info)
}

fn text(prog: &ir::Program) -> String {
    encode::subtree_text(prog, &encode::canonical_names(prog), prog.body)
}

fn random(t: &Type, sizes: &BTreeMap<String, i64>, rng: &mut XorShift) -> Value {
    match t {
        Type::Scalar(Scalar::Float) => Value::Float(rng.below(7) as f32 - 3.0),
        Type::Array(e, n) => {
            let n = n.eval(&|v| sizes.get(v).copied()).expect("a length");
            Value::Array((0..n).map(|_| random(e, sizes, rng)).collect())
        }
        other => panic!("no random values of type {other}"),
    }
}

fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => (x - y).abs() <= 1e-3 * x.abs().max(y.abs()).max(1.0),
        (Value::Array(x), Value::Array(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        _ => a == b,
    }
}

/// The number of reductions in the normal form and in the alternative (0 when there is none),
/// each checked to compute what the original computes.
fn reductions(src: &str) -> (usize, usize) {
    let (prog, info) = typed(src);
    let sizes: BTreeMap<String, i64> = prog.sizes.iter().map(|s| (s.clone(), 6)).collect();
    let mut rng = XorShift::new(28);
    let args: Vec<Value> = prog.params.iter().map(|p| random(&p.ty, &sizes, &mut rng)).collect();
    let lookup = |n: &str| sizes.get(n).copied();
    let expect = eval(&prog, &args, &lookup).expect("the original runs");
    let (normal, ninfo) = normalise::normalise(&prog, &info).unwrap_or((prog, info));
    let got = eval(&normal, &args, &lookup).expect("the normal form runs");
    assert!(close(&expect, &got), "normal form differs:\n{}", text(&normal));
    let count = |p: &ir::Program| text(p).matches("(reduce ").count();
    let other = normalise::alternative(&normal, &ninfo).map(|(alt, _)| {
        let got = eval(&alt, &args, &lookup).expect("the alternative runs");
        assert!(close(&expect, &got), "alternative differs:\n{}", text(&alt));
        count(&alt)
    });
    (count(&normal), other.unwrap_or(0))
}

const MRIQ: &str = "(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float X) (array-type float X)) \
                    (lambda (kx ky phi x y) ";

#[test]
fn two_reductions_of_one_array_are_one_reduction_of_pairs() {
    // the array both read is bound with let inside the map
    let with_let = format!(
        "{MRIQ}(map (lambda (p) (let a (map (lambda (k) (+ (* (get #0 p) (get #0 k)) (* (get #1 p) (get #1 k)))) (zip kx ky)) \
         (tuple (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (cos (get #0 am)))) (zip a phi)))) \
                (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (sin (get #0 am)))) (zip a phi))))))) (zip x y))))"
    );
    assert_eq!(reductions(&with_let), (1, 2));
    // two scalars bound with let, different operators, the second without a map
    let lets = format!(
        "{MRIQ}(map (lambda (p) (let s (at 0 (reduce + 0.0f (map (lambda (k) (* (get #0 p) k)) kx))) \
         (let m (at 0 (reduce max 0.0f kx)) (+ s (* m (get #1 p)))))) (zip x y))))"
    );
    assert_eq!(reductions(&lets), (1, 2));
    // over different arrays they stay two
    let apart = format!(
        "{MRIQ}(map (lambda (p) (let s (at 0 (reduce + 0.0f (map (lambda (k) (* (get #0 p) k)) kx))) \
         (let m (at 0 (reduce + 0.0f (map (lambda (k) (* (get #1 p) k)) ky))) (+ s m)))) (zip x y))))"
    );
    assert_eq!(reductions(&apart), (2, 0));
}

const GESUMMV: &str =
    "(lift (M N) ((array-type (array-type float N) M) (array-type (array-type float N) M) (array-type float N)) \
                       (lambda (A B x) ";

#[test]
fn a_reduction_of_pairs_has_its_two_reductions_as_the_alternative() {
    // indices, the pair built directly
    let index = format!(
        "{GESUMMV}(map (lambda (i) (let s (at 0 (reduce (lambda (u v) (tuple (+ (get #0 u) (get #0 v)) (+ (get #1 u) (get #1 v)))) \
         (tuple 0.0f 0.0f) (map (lambda (j) (tuple (* (at j (at i A)) (at j x)) (* (at j (at i B)) (at j x)))) (generate N (lambda (j) j))))) \
         (+ (get #0 s) (get #1 s)))) (generate M (lambda (i) i)))))"
    );
    assert_eq!(reductions(&index), (1, 2));
    // rows zipped, a scalar let before the pair, the operator's components in the other order
    let rows = format!(
        "{GESUMMV}(join (map (lambda (ab) (map (lambda (s) (- (get #0 s) (get #1 s))) \
         (reduce (lambda (u v) (tuple (+ (get #0 v) (get #0 u)) (max (get #1 u) (get #1 v)))) (tuple 0.0f 0.0f) \
         (map (lambda (t) (let xj (get #2 t) (tuple (* (get #0 t) xj) (* (get #1 t) xj)))) (zip (get #0 ab) (get #1 ab) x))))) \
         (zip A B)))))"
    );
    assert_eq!(reductions(&rows), (1, 2));
    // an operator that mixes the components (an argmin) has no alternative
    let argmin = format!(
        "{GESUMMV}(join (map (lambda (ab) (map (lambda (s) (get #1 s)) \
         (reduce (lambda (u v) (if (<= (get #0 u) (get #0 v)) u v)) (tuple 3.0e38f 0.0f) \
         (map (lambda (t) (tuple (get #0 t) (get #1 t))) (zip (get #0 ab) (get #1 ab)))))) (zip A B)))))"
    );
    assert_eq!(reductions(&argmin), (1, 0));
}

fn first_variant(src: &str, sizes: &[(&str, i64)]) -> rewrite::Variant {
    let (prog, info) = typed(src);
    let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let opts = Options {
        sizes: sizes.clone(),
        built_in: sizes,
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).expect("explores");
    ex.variants[0].clone()
}

#[test]
fn the_cost_model_chooses_between_one_reduction_of_pairs_and_two_reductions() {
    // long rows, few of them: a work-group reduction each (two reductions)
    let gesummv = format!(
        "{GESUMMV}(map (lambda (i) (let s (at 0 (reduce (lambda (u v) (tuple (+ (get #0 u) (get #0 v)) (+ (get #1 u) (get #1 v)))) \
         (tuple 0.0f 0.0f) (map (lambda (j) (tuple (* (at j (at i A)) (at j x)) (* (at j (at i B)) (at j x)))) (generate N (lambda (j) j))))) \
         (+ (get #0 s) (get #1 s)))) (generate M (lambda (i) i)))))"
    );
    let d = first_variant(&gesummv, &[("M", 8192), ("N", 8192)]).description;
    assert!(d.matches("wgreduce").count() == 2, "{d}");
    // a reduction for each of many points, written as two reductions of one array and as one
    // reduction of pairs: the same choice
    let two = format!(
        "{MRIQ}(map (lambda (p) (let a (map (lambda (k) (+ (* (get #0 p) (get #0 k)) (* (get #1 p) (get #1 k)))) (zip kx ky)) \
         (tuple (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (cos (get #0 am)))) (zip a phi)))) \
                (at 0 (reduce + 0.0f (map (lambda (am) (* (get #1 am) (sin (get #0 am)))) (zip a phi))))))) (zip x y))))"
    );
    let pairs = format!(
        "{MRIQ}(join (map (lambda (p) (reduce (lambda (u v) (tuple (+ (get #0 u) (get #0 v)) (+ (get #1 u) (get #1 v)))) (tuple 0.0f 0.0f) \
         (map (lambda (k) (let e (+ (* (get #0 p) (get #0 k)) (* (get #1 p) (get #1 k))) (tuple (* (get #2 k) (cos e)) (* (get #2 k) (sin e))))) \
         (zip kx ky phi)))) (zip x y)))))"
    );
    let sizes = [("X", 262144), ("K", 2048)];
    let (a, b) = (first_variant(&two, &sizes), first_variant(&pairs, &sizes));
    assert!(
        (a.cost - b.cost).abs() <= 1e-6 * b.cost,
        "{} {}\n{} {}",
        a.cost,
        a.description,
        b.cost,
        b.description
    );
}

#[test]
fn four_arrays_read_at_an_index_are_a_zip_of_four() {
    // mri-q's reduction over k reading four arrays at k, written with an index array and with
    // the zip: one normal form (as written with zip, and with the components in another order)
    let head = "(lift (X K) ((array-type float K) (array-type float K) (array-type float K) (array-type float K) (array-type float X)) \
                (lambda (a b c d x) ";
    let at = format!(
        "{head}(map (lambda (p) (at 0 (reduce + 0.0f (map (lambda (k) (* (at k d) (cos (* p (+ (at k a) (+ (at k b) (at k c))))))) \
         (generate K (lambda (k) k)))))) x)))"
    );
    let zip = format!(
        "{head}(map (lambda (p) (at 0 (reduce + 0.0f (map (lambda (k) (* (get #3 k) (cos (* p (+ (get #0 k) (+ (get #1 k) (get #2 k))))))) \
         (zip a b c d))))) x)))"
    );
    let normal = |src: &str| {
        let (prog, info) = typed(src);
        let (prog, _) = normalise::normalise(&prog, &info).unwrap_or((prog, info));
        text(&prog)
    };
    let n = normal(&at);
    assert!(!n.contains("generate") && n.contains("zip"), "{n}");
    assert_eq!(reductions(&at), reductions(&zip));
    assert_eq!(
        n.matches("(get ").count(),
        normal(&zip).matches("(get ").count(),
        "{n}\n{}",
        normal(&zip)
    );
}
