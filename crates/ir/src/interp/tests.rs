//! Interpreter tests. Expected values are computed by hand or with plain Rust loops, never with
//! the interpreter, so that the oracle is checked against something independent.

use super::*;
use crate::parse;

fn sizes_of(pairs: &[(&str, i64)]) -> impl Fn(&str) -> Option<i64> {
    let pairs: Vec<(String, i64)> = pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    move |name: &str| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

fn run(src: &str, args: &[Value], sizes: &[(&str, i64)]) -> Result<Value, RuntimeError> {
    let prog = parse(src).unwrap_or_else(|d| panic!("parse error: {} ({:?})", d.message, d.span));
    eval(&prog, args, &sizes_of(sizes))
}

fn ok(src: &str, args: &[Value], sizes: &[(&str, i64)]) -> Value {
    run(src, args, sizes).unwrap_or_else(|e| panic!("runtime error: {}", e.message))
}

fn floats(xs: &[f32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())
}

fn ints(xs: &[i32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Int(*x)).collect())
}

fn matrix(rows: &[Vec<f32>]) -> Value {
    Value::Array(rows.iter().map(|r| floats(r)).collect())
}

/// Deterministic test data without the interpreter or a random crate.
fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2654435761).max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 1000) as f32 / 1000.0
        })
        .collect()
}

fn err_message(src: &str, args: &[Value], sizes: &[(&str, i64)]) -> String {
    match run(src, args, sizes) {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.message,
    }
}

#[test]
fn program_2_1_scales_by_two() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))";
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    assert_eq!(
        ok(src, &[floats(&xs)], &[("N", 6)]),
        floats(&[2.0, 4.0, 6.0, 8.0, 10.0, 12.0])
    );
}

#[test]
fn program_2_2_split_map_join() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (o join (mapSeq (lambda (ys) (mapSeq (lambda (y) (* y 2.0f)) ys))) (split #2) xs)))";
    let xs = data(10, 1);
    let expect: Vec<f32> = xs.iter().map(|x| x * 2.0).collect();
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 10)]), floats(&expect));
}

#[test]
fn program_4_2_filter_below_half_then_double() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (unpack ys (filterSeq (lambda (x) (< x 0.5f)) xs)
        (pack (mapSeq (lambda (x) (* x 2.0f)) ys)))))";
    let xs = [0.1, 0.7, 0.5, 0.49, 0.9, 0.0];
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 6)]), floats(&[0.2, 0.98, 0.0]));
}

#[test]
fn program_6_1_filter_above_half_then_double() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (toGlobal (unpack ys (toGlobal (filterGlb (lambda (x) (> x 0.5f)) xs))
        (mapGlb (lambda (x) (* x 2.0f)) ys)))))";
    let xs = data(1000, 7);
    let mut expect = vec![];
    for x in &xs {
        if *x > 0.5 {
            expect.push(x * 2.0);
        }
    }
    assert!(!expect.is_empty() && expect.len() < xs.len());
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 1000)]), floats(&expect));
    // Nothing kept: an empty existential array, not an error.
    assert_eq!(ok(src, &[floats(&[0.1, 0.2])], &[("N", 2)]), floats(&[]));
}

#[test]
fn dot_product_by_zip_and_reduce() {
    let src = "(lift (N) ((array-type float N) (array-type float N))
      (lambda (xs ys) (reduceSeq (lambda (acc p) (+ acc (* (get #0 p) (get #1 p)))) 0.0f (zip xs ys))))";
    let (xs, ys) = (data(33, 2), data(33, 3));
    let mut acc = 0.0f32;
    for i in 0..33 {
        acc += xs[i] * ys[i];
    }
    assert_eq!(
        ok(src, &[floats(&xs), floats(&ys)], &[("N", 33)]),
        Value::Array(vec![Value::Float(acc)])
    );
    // The same with a high-level map of a two-parameter lambda over the zip, and `reduce`.
    let src2 = "(lift (N) ((array-type float N) (array-type float N))
      (lambda (xs ys) (reduce + 0.0f (map (lambda (x y) (* x y)) (zip xs ys)))))";
    assert_eq!(
        ok(src2, &[floats(&xs), floats(&ys)], &[("N", 33)]),
        Value::Array(vec![Value::Float(acc)])
    );
}

#[test]
fn matrix_vector_product() {
    let src = "(lift (N M) ((array-type (array-type float M) N) (array-type float M))
      (lambda (mat v) (join (mapGlb (lambda (row)
        (reduceSeq (lambda (acc p) (+ acc (* (get #0 p) (get #1 p)))) 0.0f (zip row v))) mat))))";
    let (n, m) = (5, 7);
    let rows: Vec<Vec<f32>> = (0..n).map(|i| data(m, 10 + i as u32)).collect();
    let v = data(m, 99);
    let mut expect = vec![];
    for row in &rows {
        let mut acc = 0.0f32;
        for j in 0..m {
            acc += row[j] * v[j];
        }
        expect.push(acc);
    }
    assert_eq!(
        ok(src, &[matrix(&rows), floats(&v)], &[("N", n as i64), ("M", m as i64)]),
        floats(&expect)
    );
}

#[test]
fn transpose_swaps_dimensions() {
    let src = "(lift (N M) ((array-type (array-type int M) N)) (lambda (xss) (transpose xss)))";
    let input = Value::Array(vec![ints(&[1, 2, 3]), ints(&[4, 5, 6])]);
    let expect = Value::Array(vec![ints(&[1, 4]), ints(&[2, 5]), ints(&[3, 6])]);
    assert_eq!(ok(src, &[input], &[("N", 2), ("M", 3)]), expect);
    assert_eq!(
        ok(src, &[Value::Array(vec![])], &[("N", 1), ("M", 1)]),
        Value::Array(vec![])
    );
    let ragged = Value::Array(vec![ints(&[1, 2]), ints(&[3])]);
    assert!(err_message(src, &[ragged], &[("N", 2), ("M", 2)]).contains("ragged"));
}

#[test]
fn three_point_stencil_with_clamped_boundary() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (mapGlb (lambda (w) (reduceSeq + 0.0f w)) (slide #3 #1 (pad-clamp #1 #1 xs)))))";
    let xs = data(9, 5);
    let n = xs.len();
    let mut expect = vec![];
    for i in 0..n {
        let l = xs[i.saturating_sub(1)];
        let r = xs[(i + 1).min(n - 1)];
        expect.push(Value::Array(vec![Value::Float(0.0 + l + xs[i] + r)]));
    }
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 9)]), Value::Array(expect));
}

#[test]
fn slide_pad_and_pad_clamp_shapes() {
    let slide = "(lift (N) ((array-type int N)) (lambda (xs) (slide #3 #2 xs)))";
    // (7 - 3 + 2) / 2 = 3 windows: 0..3, 2..5, 4..7.
    let expect = Value::Array(vec![ints(&[0, 1, 2]), ints(&[2, 3, 4]), ints(&[4, 5, 6])]);
    assert_eq!(ok(slide, &[ints(&[0, 1, 2, 3, 4, 5, 6])], &[("N", 7)]), expect);
    assert!(err_message(slide, &[ints(&[1, 2])], &[("N", 2)]).contains("shorter than one window"));
    let pad = "(lift (N) ((array-type int N)) (lambda (xs) (pad #2 #1 9 xs)))";
    assert_eq!(ok(pad, &[ints(&[1, 2])], &[("N", 2)]), ints(&[9, 9, 1, 2, 9]));
    let clamp = "(lift (N) ((array-type int N)) (lambda (xs) (pad-clamp #2 #3 xs)))";
    assert_eq!(
        ok(clamp, &[ints(&[1, 2, 3])], &[("N", 3)]),
        ints(&[1, 1, 1, 2, 3, 3, 3, 3])
    );
}

#[test]
fn reorder_stride_uses_lift_index_function() {
    let src = "(lift (N) ((array-type int N)) (lambda (xs) (reorder-stride #2 xs)))";
    // n = 6, s = 2, n/s = 3: i -> i/3 + 2*(i%3) = 0 2 4 1 3 5.
    assert_eq!(
        ok(src, &[ints(&[10, 11, 12, 13, 14, 15])], &[("N", 6)]),
        ints(&[10, 12, 14, 11, 13, 15])
    );
    let src3 = "(lift (N) ((array-type int N)) (lambda (xs) (reorder-stride #3 xs)))";
    let xs: Vec<i32> = (0..12).collect();
    let expect: Vec<i32> = (0..12).map(|i| i / 4 + 3 * (i % 4)).collect();
    assert_eq!(ok(src3, &[ints(&xs)], &[("N", 12)]), ints(&expect));
    assert!(err_message(src3, &[ints(&[1, 2, 3, 4])], &[("N", 4)]).contains("not a multiple of 3"));
}

#[test]
fn reverse_and_generate() {
    let rev = "(lift (N) ((array-type int N)) (lambda (xs) (reverse xs)))";
    assert_eq!(ok(rev, &[ints(&[1, 2, 3])], &[("N", 3)]), ints(&[3, 2, 1]));
    let gen = "(lift (N) ((array-type int N)) (lambda (xs) (generate (* N 2) (lambda (i) (* i i)))))";
    assert_eq!(ok(gen, &[ints(&[0, 0])], &[("N", 2)]), ints(&[0, 1, 4, 9]));
}

#[test]
fn generate_reads_by_index() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (generate N (lambda (i) (* 2.0f (at i xs))))))";
    let xs = data(6, 4);
    let expect: Vec<f32> = xs.iter().map(|x| 2.0 * x).collect();
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 6)]), floats(&expect));
}

#[test]
fn iterate_halves_by_pairwise_sums() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (iterate #2 (lambda (a) (join (mapSeq (lambda (c) (reduceSeq + 0.0f c)) (split #2 a)))) xs)))";
    let xs: Vec<f32> = (1..=8).map(|i| i as f32).collect();
    // [1..8] -> [3, 7, 11, 15] -> [10, 26]
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 8)]), floats(&[10.0, 26.0]));
}

#[test]
fn as_vector_and_as_scalar() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (asVector #4 xs)))";
    let xs: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let lanes = |a: &[f32]| Value::Vector(a.iter().map(|x| Value::Float(*x)).collect());
    assert_eq!(
        ok(src, &[floats(&xs)], &[("N", 8)]),
        Value::Array(vec![lanes(&[0.0, 1.0, 2.0, 3.0]), lanes(&[4.0, 5.0, 6.0, 7.0])])
    );
    let round = "(lift (N) ((array-type float N))
      (lambda (xs) (asScalar (mapGlb (lambda (v) (mapVec (lambda (x) (+ x 1.0f)) v)) (asVector #4 xs)))))";
    let expect: Vec<f32> = xs.iter().map(|x| x + 1.0).collect();
    assert_eq!(ok(round, &[floats(&xs)], &[("N", 8)]), floats(&expect));
    assert!(err_message(src, &[floats(&[1.0; 6])], &[("N", 6)]).contains("6 is not a multiple of 4"));
}

#[test]
fn vector_ops_are_lanewise_and_broadcast() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (mapSeq (lambda (v) (* (+ v v) 3.0f)) (asVector #2 xs))))";
    let v = |a: f32, b: f32| Value::Vector(vec![Value::Float(a), Value::Float(b)]);
    assert_eq!(
        ok(src, &[floats(&[1.0, 2.0, 3.0, 4.0])], &[("N", 4)]),
        Value::Array(vec![v(6.0, 12.0), v(18.0, 24.0)])
    );
    let dot = "(lift (N) ((array-type float N)) (lambda (xs)
      (tuple (dot (vec 1.0f 2.0f 3.0f 4.0f) (vec 5.0f 6.0f 7.0f 8.0f)) (length (vec 3.0f 4.0f)) (vget #1 (vec 1.0f 9.0f)))))";
    assert_eq!(
        ok(dot, &[floats(&[0.0])], &[("N", 1)]),
        Value::Tuple(vec![Value::Float(70.0), Value::Float(5.0), Value::Float(9.0)])
    );
}

#[test]
fn at_out_of_range_is_an_error() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (at 7 xs)))";
    let prog = parse(src).unwrap();
    let e = eval(&prog, &[floats(&[0.0; 5])], &sizes_of(&[("N", 5)])).unwrap_err();
    assert_eq!(e.message, "index 7 out of range for an array of length 5");
    assert_eq!(&src[e.span.start as usize..e.span.end as usize], "(at 7 xs)");
    let neg = "(lift (N) ((array-type float N)) (lambda (xs) (at (- 0 1) xs)))";
    assert_eq!(
        err_message(neg, &[floats(&[0.0; 5])], &[("N", 5)]),
        "index -1 out of range for an array of length 5"
    );
    let fine = "(lift (N) ((array-type float N)) (lambda (xs) (at 4 xs)))";
    assert_eq!(
        ok(fine, &[floats(&[0.0, 1.0, 2.0, 3.0, 4.5])], &[("N", 5)]),
        Value::Float(4.5)
    );
}

#[test]
fn split_that_does_not_divide_is_an_error() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (split #3 xs)))";
    assert_eq!(
        err_message(src, &[floats(&[0.0; 10])], &[("N", 10)]),
        "split #3 of an array of length 10: 10 is not a multiple of 3"
    );
    let by_size = "(lift (N M) ((array-type float N) (array-type float M)) (lambda (xs ys) (split M xs)))";
    let v = ok(
        by_size,
        &[floats(&[1.0, 2.0, 3.0, 4.0]), floats(&[0.0, 0.0])],
        &[("N", 4), ("M", 2)],
    );
    assert_eq!(v, Value::Array(vec![floats(&[1.0, 2.0]), floats(&[3.0, 4.0])]));
}

#[test]
fn unbound_size_is_an_error() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (split N xs)))";
    assert!(err_message(src, &[floats(&[0.0; 4])], &[]).contains("cannot evaluate the size `N`"));
}

#[test]
fn zip_of_different_lengths_is_an_error() {
    let src = "(lift (N M) ((array-type float N) (array-type float M)) (lambda (xs ys) (zip xs ys)))";
    let m = err_message(src, &[floats(&[1.0]), floats(&[1.0, 2.0])], &[("N", 1), ("M", 2)]);
    assert!(m.contains("different lengths"), "{m}");
    let three = "(lift (N) ((array-type int N) (array-type int N) (array-type int N)) (lambda (a b c) (zip a b c)))";
    let t = |a, b, c| Value::Tuple(vec![Value::Int(a), Value::Int(b), Value::Int(c)]);
    assert_eq!(
        ok(three, &[ints(&[1, 2]), ints(&[3, 4]), ints(&[5, 6])], &[("N", 2)]),
        Value::Array(vec![t(1, 3, 5), t(2, 4, 6)])
    );
}

#[test]
fn float_arithmetic_is_single_precision() {
    // 16777216 + 1 is not representable in f32: computing in f64 and rounding at the end
    // would also round, so use a sum whose f32 and f64 results differ after the second step.
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (reduceSeq + 0.0f xs)))";
    let xs = [16777216.0f32, 1.0, 1.0];
    let mut acc = 0.0f32;
    for x in xs {
        acc += x;
    }
    assert_eq!(acc, 16777216.0);
    assert_eq!(
        ok(src, &[floats(&xs)], &[("N", 3)]),
        Value::Array(vec![Value::Float(acc)])
    );
    let d = "(lift (N) ((array-type double N)) (lambda (xs) (reduceSeq + 0.0d xs)))";
    let dv = Value::Array(xs.iter().map(|x| Value::Double(f64::from(*x))).collect());
    assert_eq!(ok(d, &[dv], &[("N", 3)]), Value::Array(vec![Value::Double(16777218.0)]));
}

#[test]
fn integer_semantics_follow_c() {
    let src = "(lift (N) ((array-type int N)) (lambda (xs)
      (tuple (/ (- 0 7) 2) (% (- 0 7) 2) (+ 2147483647 1) (abs (- 0 3)) (min 3 (- 0 4)) (to-int (- 0.0f 2.7f)) (to-int 2.7f))))";
    let expect = Value::Tuple(vec![
        Value::Int(-3),
        Value::Int(-1),
        Value::Int(i32::MIN),
        Value::Int(3),
        Value::Int(-4),
        Value::Int(-2),
        Value::Int(2),
    ]);
    assert_eq!(ok(src, &[ints(&[0])], &[("N", 1)]), expect);
    let div0 = "(lift (N) ((array-type int N)) (lambda (xs) (/ 1 (at 0 xs))))";
    assert_eq!(
        err_message(div0, &[ints(&[0])], &[("N", 1)]),
        "integer division by zero"
    );
    let rem0 = "(lift (N) ((array-type int N)) (lambda (xs) (% 1 (at 0 xs))))";
    assert_eq!(
        err_message(rem0, &[ints(&[0])], &[("N", 1)]),
        "integer remainder by zero"
    );
}

#[test]
fn float_operators() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs)
      (tuple (% 7.5f 2.0f) (fma 2.0f 3.0f 1.0f) (sqrt 16.0f) (- (at 0 xs)) (max 1.0f 2.0f) (pow 2.0f 10.0f) (to-float 3) (/ 1.0f 0.0f))))";
    let expect = Value::Tuple(vec![
        Value::Float(1.5),
        Value::Float(7.0),
        Value::Float(4.0),
        Value::Float(-0.25),
        Value::Float(2.0),
        Value::Float(1024.0),
        Value::Float(3.0),
        Value::Float(f32::INFINITY),
    ]);
    assert_eq!(ok(src, &[floats(&[0.25])], &[("N", 1)]), expect);
}

#[test]
fn comparisons_and_logic() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs)
      (tuple (< 1.0f 2.0f) (>= 1 2) (= 3 3) (!= true false) (and true false) (or false true) (not false))))";
    let b = Value::Bool;
    assert_eq!(
        ok(src, &[floats(&[0.0])], &[("N", 1)]),
        Value::Tuple(vec![b(true), b(false), b(true), b(true), b(false), b(true), b(true)])
    );
}

#[test]
fn and_or_short_circuit_like_c() {
    // The guarded `at` would be out of range if evaluated.
    let src = "(lift (N) ((array-type float N)) (lambda (xs)
      (generate #4 (lambda (i) (and (< i 2) (> (at i xs) 0.5f))))))";
    let b = Value::Bool;
    assert_eq!(
        ok(src, &[floats(&[0.9, 0.1])], &[("N", 2)]),
        Value::Array(vec![b(true), b(false), b(false), b(false)])
    );
}

#[test]
fn if_evaluates_only_the_chosen_branch() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs)
      (mapSeq (lambda (i) (if (< i 3) (at i xs) 0.0f)) (generate #5 (lambda (i) i)))))";
    assert_eq!(
        ok(src, &[floats(&[1.0, 2.0, 3.0])], &[("N", 3)]),
        floats(&[1.0, 2.0, 3.0, 0.0, 0.0])
    );
}

#[test]
fn let_shadowing_restores_outer_binding() {
    let src = "(lift (N) ((array-type int N)) (lambda (xs)
      (let y 1 (tuple (let y 2 (+ y 10)) y))))";
    assert_eq!(
        ok(src, &[ints(&[0])], &[("N", 1)]),
        Value::Tuple(vec![Value::Int(12), Value::Int(1)])
    );
}

#[test]
fn nested_maps_with_outer_variables() {
    let src = "(lift (N M) ((array-type int N) (array-type int M))
      (lambda (xs ys) (map (lambda (x) (map (lambda (y) (- x y)) ys)) xs)))";
    let expect = Value::Array(vec![
        ints(&[10 - 1, 10 - 2]),
        ints(&[20 - 1, 20 - 2]),
        ints(&[30 - 1, 30 - 2]),
    ]);
    assert_eq!(
        ok(src, &[ints(&[10, 20, 30]), ints(&[1, 2])], &[("N", 3), ("M", 2)]),
        expect
    );
}

#[test]
fn large_inputs_do_not_grow_the_stack() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (reduceSeq + 0.0f (mapSeq (lambda (x) (* x 2.0f)) xs))))";
    let n = 200_000;
    let xs = vec![1.0f32; n];
    assert_eq!(
        ok(src, &[floats(&xs)], &[("N", n as i64)]),
        Value::Array(vec![Value::Float(400_000.0)])
    );
}

#[test]
fn wrong_argument_count_is_an_error() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) xs))";
    assert!(err_message(src, &[], &[("N", 1)]).contains("takes 1 argument"));
}

#[test]
fn ill_typed_values_are_errors_not_panics() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (+ (at 0 xs) true)))";
    assert!(err_message(src, &[floats(&[1.0])], &[("N", 1)]).contains("cannot be applied"));
    // An argument that does not match the declared type.
    let m = "(lift (N) ((array-type float N)) (lambda (xs) (mapSeq (lambda (x) (* x 2.0f)) xs)))";
    assert!(err_message(m, &[Value::Int(3)], &[("N", 1)]).contains("expects an array"));
}

#[test]
fn json_output() {
    let v = Value::Array(vec![
        Value::Float(0.1),
        Value::Float(1.0),
        Value::Float(-2.5e-8),
        Value::Float(1e20),
        Value::Double(0.1),
        Value::Int(-3),
        Value::Bool(true),
        Value::Tuple(vec![
            Value::Float(f32::NAN),
            Value::Double(f64::INFINITY),
            Value::Float(f32::NEG_INFINITY),
        ]),
        Value::Vector(vec![Value::Int(1), Value::Int(2)]),
        Value::Array(vec![]),
    ]);
    assert_eq!(
        v.to_json(),
        "[0.1,1.0,-2.5e-8,1e20,0.1,-3,true,[NaN,Infinity,-Infinity],[1,2],[]]"
    );
}

fn bounded(src: &str, args: &[Value], sizes: &[(&str, i64)]) -> Result<Value, RuntimeError> {
    bounded_at(src, args, sizes, crate::Precision::F32)
}

fn bounded_at(
    src: &str,
    args: &[Value],
    sizes: &[(&str, i64)],
    precision: crate::Precision,
) -> Result<Value, RuntimeError> {
    let prog = parse(src).unwrap_or_else(|d| panic!("parse error: {}", d.message));
    let opts = Options {
        arith: Arith::Bounded,
        max_steps: None,
        precision,
    };
    eval_with(&prog, args, &sizes_of(sizes), &opts)
}

/// `x` rounded to TF32 as PTX's `cvt.rna.tf32.f32` does (to nearest, ties away from zero):
/// the 13 low bits of the significand cleared.
fn tf32_rna(x: f32) -> f32 {
    f32::from_bits((x.to_bits() + 0x1000) & !0x1fff)
}

/// `x` as a tensor core reads `f32` bits it is given: the 13 low bits ignored.
fn tf32_cut(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & !0x1fff)
}

#[test]
fn tf32_bound_covers_dot_products_of_rounded_operands_and_f32_bound_does_not() {
    let n = 4096;
    let xs: Vec<f32> = data(n, 11).iter().map(|x| x * 2.0 + 0.1).collect();
    let ys: Vec<f32> = data(n, 12).iter().map(|x| x * 3.0 + 0.2).collect();
    let src = "(lift (N) ((array-type float N) (array-type float N)) (lambda (xs ys) \
               (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip xs ys)))))";
    let args = [floats(&xs), floats(&ys)];
    let at = |p| approx_of(&bounded_at(src, &args, &[("N", n as i64)], p).unwrap());
    let (f32_bound, tf32_bound) = (at(crate::Precision::F32), at(crate::Precision::Tf32));
    assert_eq!(
        f32_bound.value, tf32_bound.value,
        "the value does not depend on the precision"
    );
    // what a tensor core computes: operands rounded (or cut) to TF32, products summed in f32
    // in blocks of 8 (one m16n8k8 step) and the blocks in order
    let device = |round: fn(f32) -> f32| {
        xs.chunks(8)
            .zip(ys.chunks(8))
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| round(*x) * round(*y)).sum::<f32>())
            .fold(0.0f32, |acc, block| acc + block)
    };
    let (rounded, cut) = (device(tf32_rna), device(tf32_cut));
    assert!(covers(&tf32_bound, rounded), "{rounded} outside {tf32_bound:?}");
    assert!(covers(&tf32_bound, cut), "{cut} outside {tf32_bound:?}");
    // cutting errs one way on every operand: far outside what f32 rounding allows
    assert!(!covers(&f32_bound, cut), "{cut} inside the f32 bound {f32_bound:?}");
    // the f32 evaluation is still within the (looser) TF32 bound
    let seq = xs.iter().zip(&ys).fold(0.0f32, |a, (x, y)| a + x * y);
    assert!(covers(&tf32_bound, seq) && covers(&f32_bound, seq));
    assert!(tf32_bound.dev > f32_bound.dev);
}

#[test]
fn tf32_bound_leaves_double_products_alone() {
    let src = "(lift (N) ((array-type double N)) (lambda (xs) (reduce + 0.0 (map (lambda (x) (* x x)) xs))))";
    let xs = Value::Array(data(64, 5).into_iter().map(|x| Value::Double(f64::from(x))).collect());
    let at = |p| approx_of(&bounded_at(src, std::slice::from_ref(&xs), &[("N", 64)], p).unwrap());
    assert_eq!(at(crate::Precision::F32), at(crate::Precision::Tf32));
}

/// The single `Approx` in a one-element array.
fn approx_of(v: &Value) -> Approx {
    match v {
        Value::Array(xs) if xs.len() == 1 => match &xs[0] {
            Value::Approx(a) => *a,
            other => panic!("not an Approx: {other:?}"),
        },
        other => panic!("not a one-element array: {other:?}"),
    }
}

fn covers(a: &Approx, x: f32) -> bool {
    (f64::from(x) - a.value).abs() <= f64::from(a.own) + f64::from(a.dev)
}

#[test]
fn bounded_reduce_covers_every_float32_order() {
    let xs: Vec<f32> = data(5000, 7).iter().map(|x| x * 100.0 - 30.0).collect();
    let n = [("N", 5000)];
    let plain = approx_of(
        &bounded(
            "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))",
            &[floats(&xs)],
            &n,
        )
        .unwrap(),
    );
    let seq = xs.iter().fold(0.0f32, |a, x| a + x);
    let rev = xs.iter().rev().fold(0.0f32, |a, x| a + x);
    let mut pairwise = xs.clone();
    while pairwise.len() > 1 {
        pairwise = pairwise.chunks(2).map(|c| c.iter().sum()).collect();
    }
    let exact: f64 = xs.iter().map(|x| f64::from(*x)).sum();
    assert!((exact - plain.value).abs() <= f64::from(plain.own));
    for x in [seq, rev, pairwise[0]] {
        assert!(covers(&plain, x), "{x} outside {plain:?}");
    }
    // `reduceSeq` fixes the order: its bound covers that order and is no larger.
    let fixed = approx_of(
        &bounded(
            "(lift (N) ((array-type float N)) (lambda (xs) (reduceSeq (lambda (a b) (+ a b)) 0.0f xs)))",
            &[floats(&xs)],
            &n,
        )
        .unwrap(),
    );
    assert!(covers(&fixed, seq) && fixed.dev <= plain.dev, "{fixed:?} {plain:?}");
    // The default arithmetic is untouched.
    let native = run(
        "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))",
        &[floats(&xs)],
        &n,
    )
    .unwrap();
    assert_eq!(native, floats(&[seq]));
}

#[test]
fn bounded_functions_cover_float32() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) \
               (+ (/ (sqrt x) (+ x 1.0f)) (* (exp (- 0.0f x)) (sin (* x 3.0f))))) xs)))";
    let xs = data(200, 3);
    let native = match run(src, &[floats(&xs)], &[("N", 200)]).unwrap() {
        Value::Array(v) => v,
        other => panic!("{other:?}"),
    };
    let Value::Array(b) = bounded(src, &[floats(&xs)], &[("N", 200)]).unwrap() else {
        panic!()
    };
    for (n, b) in native.iter().zip(&b) {
        let (Value::Float(n), Value::Approx(a)) = (n, b) else {
            panic!("{n:?} {b:?}")
        };
        assert!(covers(a, *n), "{n} outside {a:?}");
        assert!(f64::from(a.dev) <= 1e-5, "{a:?}");
    }
}

#[test]
fn bounded_comparison_that_rounding_could_flip_is_unbounded() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (if (< (* x 3.0f) 0.3f) 1 0)) xs)))";
    let e = bounded(src, &[floats(&[0.1])], &[("N", 1)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unbounded, "{}", e.message);
    // Far from the threshold it is decided.
    let v = bounded(src, &[floats(&[0.5])], &[("N", 1)]).unwrap();
    assert_eq!(v, ints(&[0]));
}

#[test]
fn step_limit_stops_evaluation() {
    let prog = parse("(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x x)) xs)))").unwrap();
    let opts = Options {
        arith: Arith::Native,
        max_steps: Some(10),
        precision: crate::Precision::F32,
    };
    let e = eval_with(&prog, &[floats(&data(100, 1))], &sizes_of(&[("N", 100)]), &opts).unwrap_err();
    assert_eq!(e.kind, ErrorKind::StepLimit);
}

#[test]
fn iterate_until_stops_at_the_first_step_whose_condition_holds() {
    // Halving until no element changes by more than 1: 64 -> 32 -> 16 -> 8 -> 4 -> 2 -> 1,
    // changes 32, 16, 8, 4, 2, 1: the sixth step's change (1) is the first at most 1.
    let src = "(lift (N) ((array-type float N)) (lambda (xs)
      (iterate-until #100
        (lambda (p q) (reduceSeq (lambda (c pq) (and c (<= (- (get #0 pq) (get #1 pq)) 1.0f))) true (zip p q)))
        (lambda (s) (mapSeq (lambda (x) (/ x 2.0f)) s))
        xs)))";
    assert_eq!(ok(src, &[floats(&[64.0, 32.0])], &[("N", 2)]), floats(&[1.0, 0.5]));
    // At most #max steps.
    let capped = src.replace("#100", "#2");
    assert_eq!(ok(&capped, &[floats(&[64.0, 32.0])], &[("N", 2)]), floats(&[16.0, 8.0]));
    // `if` branches on a [bool]1 as on a bool.
    let sel = "(lift (N) ((array-type float N)) (lambda (xs)
      (if (reduceSeq (lambda (c x) (and c (> x 0.0f))) true xs) xs (mapSeq (lambda (x) (- 0.0f x)) xs))))";
    assert_eq!(ok(sel, &[floats(&[1.0, 2.0])], &[("N", 2)]), floats(&[1.0, 2.0]));
    assert_eq!(ok(sel, &[floats(&[1.0, -2.0])], &[("N", 2)]), floats(&[-1.0, 2.0]));
}

/// Loops inside a work-item: each element runs its own `iterate-until` (its own number of
/// steps) and `iterate K` counts with the run-time size.
#[test]
fn loops_inside_a_map_run_per_element() {
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs) (map (lambda (x)
        (tuple
          (get #1 (iterate-until #50 (lambda (p q) (< (get #0 q) 1.0f))
                    (lambda (s) (tuple (* (get #0 s) 0.5f) (+ (get #1 s) 1))) (tuple x 0)))
          (iterate K (lambda (y) (+ y 1.0f)) x)))
        xs)))";
    let xs = [0.5f32, 3.0, 100.0, 1.0];
    let want: Vec<Value> = xs
        .iter()
        .map(|&x| {
            // steps of halving until below 1 (at least one), by a plain loop
            let (mut v, mut n) = (x, 0);
            loop {
                v *= 0.5;
                n += 1;
                if v < 1.0 || n == 50 {
                    break;
                }
            }
            Value::Tuple(vec![Value::Int(n), Value::Float(x + 3.0)])
        })
        .collect();
    assert_eq!(ok(src, &[floats(&xs)], &[("N", 4), ("K", 3)]), Value::Array(want));
}
