//! Unit tests of the tuner: checks against the interpreter, budgets, seeding, calibration,
//! mutations and lean inputs.

use super::*;
use crate::calibration::*;
use crate::check::*;
use crate::measure::*;
use crate::rows::*;
use crate::search::*;
use ir::interp::Value;
use std::collections::BTreeMap;

const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";

/// A partial reduction as the rewriter makes them: sums of chunks of 256, then their sum.
fn chunked(init: &str) -> String {
    format!(
        "(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (reduceSeq (lambda (a b) (+ a b)) 0.0f \
             (join (toGlobal (mapGlb (lambda (c) (reduceSeq (lambda (a b) (+ a b)) {init} c)) (split #256 xs))))))))"
    )
}

fn inputs(xs: &[f32]) -> data::Inputs {
    data::Inputs {
        values: vec![Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())],
        sizes: [("N".to_string(), xs.len() as i64)].into_iter().collect(),
    }
}

fn bounded(src: &str, xs: &[f32]) -> Value {
    match bounded_eval(src, &inputs(xs), CHECK_STEPS) {
        Ok(Ok(v)) => v,
        other => panic!("no bounded value: {other:?}"),
    }
}

/// What a device computes for `chunked`: float32 sums in that order.
fn chunked_f32(xs: &[f32]) -> f32 {
    xs.chunks(256)
        .map(|c| c.iter().fold(0.0f32, |a, x| a + x))
        .fold(0.0, |a, p| a + p)
}

fn sequential_f32(xs: &[f32]) -> f32 {
    xs.iter().fold(0.0f32, |a, x| a + x)
}

fn one(x: f32) -> Value {
    Value::Array(vec![Value::Float(x)])
}

/// Deterministic floats in [0, 1).
fn noise(n: usize) -> Vec<f32> {
    let mut s = 0x2545_f491_u32;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / 16_777_216.0
        })
        .collect()
}

/// 2^24 followed by ones: a float32 sum in sequence never moves from 2^24 (each `+ 1` rounds
/// back), while a partial reduction keeps most of the ones. Both are legal orders for
/// `reduce`, 0.4% apart: far beyond the old fixed 1e-3 tolerance.
#[test]
fn a_reassociated_large_sum_passes() {
    let mut xs = vec![1.0f32; 65_536];
    xs[0] = 16_777_216.0;
    let reference = bounded(SUM, &xs);
    let variant = bounded(&chunked("0.0f"), &xs);
    let (seq, part) = (sequential_f32(&xs), chunked_f32(&xs));
    assert_eq!(seq, 16_777_216.0);
    assert!(
        !crate::values_close(&one(seq), &one(part), 1e-3),
        "{seq} and {part} are close"
    );
    let c = check_result(&reference, &variant, &one(part));
    assert!(matches!(c, Check::Ok { .. }), "partial reduction: {c:?}");
    // The naive program's `reduce` may be lowered in any order, the sequential one included.
    let c = check_result(&reference, &reference, &one(seq));
    assert!(matches!(c, Check::Ok { .. }), "sequential sum of the program: {c:?}");
    let c = check_result(&reference, &reference, &one(part));
    assert!(matches!(c, Check::Ok { .. }), "partial sums of the program: {c:?}");
    // The partial reduction's own order is pinned down, so its bound is much tighter.
    assert!(
        matches!(check_result(&reference, &variant, &one(seq)), Check::Wrong(_)),
        "the sequential result is not what the partial reduction can give"
    );
}

#[test]
fn random_sums_pass_in_every_order() {
    let xs = noise(102_400);
    let reference = bounded(SUM, &xs);
    let variant = bounded(&chunked("0.0f"), &xs);
    let pairwise = |xs: &[f32]| {
        let mut v = xs.to_vec();
        while v.len() > 1 {
            v = v.chunks(2).map(|c| c.iter().sum()).collect();
        }
        v[0]
    };
    let reversed = xs.iter().rev().fold(0.0f32, |a, x| a + x);
    for got in [sequential_f32(&xs), chunked_f32(&xs), pairwise(&xs), reversed] {
        let c = check_result(&reference, &reference, &one(got));
        assert!(matches!(c, Check::Ok { .. }), "{got}: {c:?}");
    }
    let c = check_result(&reference, &variant, &one(chunked_f32(&xs)));
    let Check::Ok { bound, used } = c else { panic!("{c:?}") };
    assert!(bound < 1e-4 && used <= 1.0, "bound {bound}, used {used}");
}

/// A device result that misses one element (an off-by-one bound in a kernel) is caught.
#[test]
fn a_sum_missing_one_element_fails() {
    let mut xs = noise(4096);
    xs[4095] = 0.75;
    let reference = bounded(SUM, &xs);
    let variant = bounded(&chunked("0.0f"), &xs);
    let short = chunked_f32(&xs[..4095]);
    let c = check_result(&reference, &variant, &one(short));
    assert!(
        matches!(&c, Check::Wrong(w) if w.contains("float32 error bound")),
        "{c:?}"
    );
    let c = check_result(&reference, &reference, &one(short));
    assert!(matches!(c, Check::Wrong(_)), "{c:?}");
}

/// A rewrite that changed the value (here a wrong neutral element) is caught in exact
/// arithmetic, whatever the device returns.
#[test]
fn a_wrong_rewrite_fails() {
    let xs = noise(4096);
    let reference = bounded(SUM, &xs);
    let variant = bounded(&chunked("0.001f"), &xs);
    let c = check_result(&reference, &variant, &one(chunked_f32(&xs)));
    assert!(matches!(&c, Check::Wrong(w) if w.contains("exact arithmetic")), "{c:?}");
}

/// A calibration that ranks the model's first variants last still leaves them among the
/// first seeds (sum's one-launch grid reductions in the H200 suite run of 2026-11-24).
#[test]
fn the_models_first_variants_are_seeded_whatever_the_calibration() {
    assert_eq!(seed_order(&[5, 4, 3, 2, 1]), vec![5, 1, 4, 2, 3]);
    assert_eq!(seed_order(&[1, 2, 3]), vec![1, 2, 3]);
    assert_eq!(seed_order(&[2, 1]), vec![2, 1]);
    assert!(seed_order(&[]).is_empty());
}

/// The calibration recovers the coefficients of timings made with them, whatever each
/// program's own constant; the prior holds a feature that never varies at its value.
#[test]
fn calibration_fits_coefficients_across_programs() {
    let truth = [0.8, -0.5, 0.3];
    let mut points = vec![];
    for (p, constant) in [("a", 1.0), ("b", -4.0), ("c", 7.5)] {
        for i in 0..12 {
            let f = [(i % 5) as f64 * 0.7, ((i * 7) % 4) as f64 - 1.5, (i % 3) as f64];
            let y = constant + truth.iter().zip(f).map(|(c, x)| c * x).sum::<f64>();
            points.push((p.to_string(), f, y));
        }
    }
    let (coef, programs) = fit(&points).expect("a fit");
    assert_eq!(programs, 3);
    for (c, t) in coef.iter().zip(truth) {
        assert!((c - t).abs() < 0.05, "{coef:?} against {truth:?}");
    }
    // the number of kernels never varies: its coefficient stays at the prior's 0
    let flat: Vec<_> = points
        .iter()
        .map(|(p, f, y)| (p.clone(), [f[0], f[1], 2.0], *y))
        .collect();
    let (coef, _) = fit(&flat).expect("a fit");
    assert_eq!(coef[2], 0.0, "{coef:?}");
    assert!(fit(&points[..3]).is_none());
}

/// A configuration with its sizes as kernel arguments ranks first only when it is faster
/// than the built-in one by more than [`ARGUMENTS_MARGIN`] (convolution_row's 7 %, not a
/// timing's noise).
#[test]
fn sizes_as_arguments_rank_first_only_when_clearly_faster() {
    let row = |ms: f64, built_in: bool| Row {
        started_s: 0.0,
        ended_s: 0.0,
        device: "d".into(),
        device_index: 0,
        variant: 1,
        work_group: vec![],
        try_no: 1,
        found_by: "seed (cost model)",
        median_ms: Some(ms),
        check: Check::Ok { bound: 0.0, used: 0.0 },
        error: String::new(),
        description: String::new(),
        resumed: false,
        secs: 0.0,
        cut: None,
        built_in,
    };
    let first = |a: &Row, b: &Row| a.rank_key().1 < b.rank_key().1;
    assert!(first(&row(0.3957, false), &row(0.4257, true)));
    assert!(!first(&row(0.995, false), &row(1.0, true)));
    assert!(first(&row(1.0, true), &row(0.995, false)));
    assert!(row(1.0, false).note().contains("sizes as kernel arguments"));
}

/// The search's mutations never repeat a configuration, and exhaust the space.
#[test]
fn mutations_cover_every_configuration_once() {
    let row = |variant: usize, ms: f64| Row {
        started_s: 0.0,
        ended_s: 0.0,
        device: "d".into(),
        device_index: 0,
        variant,
        work_group: vec![],
        try_no: variant + 1,
        found_by: "seed (cost model)",
        median_ms: Some(ms),
        check: Check::Ok { bound: 0.0, used: 0.0 },
        error: String::new(),
        description: String::new(),
        resumed: false,
        secs: 0.0,
        cut: None,
        built_in: true,
    };
    let rows = vec![row(0, 3.0), row(1, 1.0)];
    let order = [1, 2, 3];
    let mut tried = vec![
        Config {
            variant: 0,
            work_group: vec![],
        },
        Config {
            variant: 1,
            work_group: vec![],
        },
    ];
    let mut rng = Rng(7);
    while let Some((c, how)) = mutate(&rows, 0, &tried, &order, &mut rng) {
        assert!(!tried.contains(&c), "{c:?} again ({how})");
        tried.push(c);
    }
    assert_eq!(tried.len(), 4 * (WORK_GROUPS.len() + 1), "{tried:?}");
}

/// Elementwise results shifted by one element are caught at the first element.
#[test]
fn a_shifted_map_fails() {
    let src = "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x 3.0f)) xs)))";
    let xs = noise(64);
    let reference = bounded(src, &xs);
    let right: Vec<f32> = xs.iter().map(|x| x * 3.0).collect();
    let arr = |v: &[f32]| Value::Array(v.iter().map(|x| Value::Float(*x)).collect());
    assert!(matches!(
        check_result(&reference, &reference, &arr(&right)),
        Check::Ok { .. }
    ));
    let mut shifted = right[1..].to_vec();
    shifted.push(0.0);
    let c = check_result(&reference, &reference, &arr(&shifted));
    assert!(matches!(&c, Check::Wrong(w) if w.starts_with("element [0]")), "{c:?}");
    let c = check_result(&reference, &reference, &arr(&right[1..]));
    assert!(matches!(&c, Check::Wrong(w) if w.contains("length 63")), "{c:?}");
}

/// What cannot be checked says so: a comparison that rounding could flip, or a variant
/// beyond the step limit.
#[test]
fn unverifiable_results_are_reported_unchecked() {
    let src = "(lift (N) ((array-type float N)) \
                   (lambda (xs) (map (lambda (x) (if (< (+ x 0.1f) 0.6f) 1.0f 0.0f)) xs)))";
    let c = bounded_eval(src, &inputs(&[0.5]), CHECK_STEPS).unwrap();
    assert!(
        matches!(&c, Err(Check::Unchecked(w)) if w.contains("rounding")),
        "{c:?}"
    );
    let c = bounded_eval(SUM, &inputs(&noise(1000)), 100).unwrap();
    assert!(
        matches!(&c, Err(Check::Unchecked(w)) if w.contains("--check-steps")),
        "{c:?}"
    );
    // Integers are compared exactly.
    let ints = Value::Array(vec![Value::Int(3)]);
    let c = check_result(&ints, &ints, &Value::Array(vec![Value::Int(4)]));
    assert!(matches!(c, Check::Wrong(_)), "{c:?}");
}

/// A clock the test moves: seconds as the bits of an f64.
fn fake_clock() -> (
    std::sync::Arc<std::sync::atomic::AtomicU64>,
    Box<dyn Fn() -> f64 + Send + Sync>,
) {
    let t = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0f64.to_bits()));
    let read = t.clone();
    (
        t,
        Box::new(move || f64::from_bits(read.load(std::sync::atomic::Ordering::SeqCst))),
    )
}

fn advance(t: &std::sync::atomic::AtomicU64, secs: f64) {
    let now = f64::from_bits(t.load(std::sync::atomic::Ordering::SeqCst));
    t.store((now + secs).to_bits(), std::sync::atomic::Ordering::SeqCst);
}

/// A search's steps as `tune_with` takes them, against a fake runner: `costs[i]` is what
/// measuring configuration `i` (of variant `i % 3`) takes. Returns the configurations
/// measured (or cut) and the clock at the end.
fn fake_search(budget_s: f64, costs: &[f64]) -> (Vec<(usize, bool)>, f64) {
    let (t, clock) = fake_clock();
    let mut budget = Budget::new(Some(std::time::Duration::from_secs_f64(budget_s)), clock);
    let limit = std::time::Duration::from_secs_f64(TIME_LIMIT_S);
    let mut done = vec![];
    for (i, &cost) in costs.iter().enumerate() {
        let Some(this_limit) = budget.admit(i % 3, 0.0, done.is_empty(), limit) else {
            continue;
        };
        if cost > this_limit.as_secs_f64() {
            // abandoned at its limit: the device is busy, the search ends
            advance(&t, this_limit.as_secs_f64());
            done.push((i, true));
            break;
        }
        advance(&t, cost);
        budget.trial(i % 3, cost);
        done.push((i, false));
    }
    (done, f64::from_bits(t.load(std::sync::atomic::Ordering::SeqCst)))
}

/// Whatever the configurations cost, a budgeted search ends within its budget: each one is
/// started only where its estimate (from what was seen) ends within the search's share.
#[test]
fn a_budgeted_search_stops_within_its_budget() {
    let (done, end) = fake_search(10.0, &[1.0; 40]);
    assert!(end <= 10.0 * SEARCH_SHARE, "{end}");
    assert_eq!(done.len(), 8, "{done:?}");
    // A variant seen to be expensive (a long build) is left out, cheaper ones go on.
    let costs: Vec<f64> = (0..40).map(|i| if i % 3 == 2 { 4.0 } else { 0.5 }).collect();
    let (done, end) = fake_search(10.0, &costs);
    assert!(end <= 10.0, "{end}");
    assert_eq!(done.iter().filter(|(i, _)| i % 3 == 2).count(), 1, "{done:?}");
    assert!(done.len() >= 9, "{done:?}");
}

/// A configuration that would run past the budget is cut at its end, the first one too.
#[test]
fn a_slow_configuration_is_cut_at_the_budget() {
    let (done, end) = fake_search(10.0, &[100.0, 1.0]);
    assert_eq!(done, vec![(0, true)]);
    assert!((end - 10.0 * FINISH_SHARE).abs() < 1e-9, "{end}");
    let (done, end) = fake_search(10.0, &[1.0, 1.0, 1.0, 1.0, 30.0, 1.0]);
    assert_eq!(done.last(), Some(&(4, true)), "{done:?}");
    assert!(end <= 10.0 * FINISH_SHARE, "{end}");
    // Without a budget nothing is cut but by the time limit.
    let (_, clock) = fake_clock();
    let b = Budget::new(None, clock);
    assert_eq!(
        b.admit(0, 1e9, false, std::time::Duration::from_secs(600)),
        Some(std::time::Duration::from_secs(600))
    );
}

/// Re-timing a leader costs its first measurement again plus the runs beyond the first:
/// a slow configuration's five runs do not fit where a fast one's do.
#[test]
fn retiming_estimates_its_runs() {
    let (t, clock) = fake_clock();
    let b = Budget::new(Some(std::time::Duration::from_secs(10)), clock);
    advance(&t, 6.0);
    assert!(b.admits(1.0, Budget::retime_cost(1.0, 10.0, 5)));
    assert!(!b.admits(1.0, Budget::retime_cost(1.0, 1500.0, 5)));
    // Without a budget, a configuration whose first run is already SLOW_CUT times the best
    // is run only once.
    assert!(slow(3.5, 1.0) && !slow(2.5, 1.0));
}

fn flat_bytes(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Float(f) => out.extend(f.to_le_bytes()),
        Value::Double(d) => out.extend(d.to_le_bytes()),
        Value::Int(i) => out.extend(i.to_le_bytes()),
        Value::Bool(b) => out.extend(i32::from(*b).to_le_bytes()),
        Value::Uint(u) => out.extend(u.to_le_bytes()),
        Value::Long(l) => out.extend(l.to_le_bytes()),
        Value::Ulong(u) => out.extend(u.to_le_bytes()),
        Value::Array(xs) | Value::Vector(xs) | Value::Tuple(xs) => xs.iter().for_each(|x| flat_bytes(x, out)),
        Value::Approx(a) => out.extend(a.value.to_le_bytes()),
    }
}

/// A tune without checks gets the same random numbers as buffer bytes, not values: its
/// arrays of scalars (md's neighbour indices), of vectors (md's float4 particles) and of
/// tuples (nn's pairs) as bytes, its scalars still as values, drawn in the same order.
#[test]
fn lean_inputs_are_the_same_numbers() {
    lean_inputs_of("md_rows", &[("N", 64), ("M", 8)], 2);
    lean_inputs_of("nn", &[("N", 64)], 1);
}

fn lean_inputs_of(name: &str, sizes: &[(&str, i64)], arrays: usize) {
    let src = std::fs::read_to_string(format!("../../bench/cgo17/{name}.lisp")).unwrap();
    let prog = compile(&src, &Options::types_only()).unwrap().given;
    let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let full = data::random_inputs(&prog, &sizes, 42).unwrap();
    let (lean, bytes) = data::random_inputs_lean(&prog, &sizes, 42, false).unwrap();
    assert_eq!(bytes.len(), full.values.len());
    let mut as_bytes = 0;
    for (k, b) in bytes.iter().enumerate() {
        match b {
            Some(b) => {
                let mut want = vec![];
                flat_bytes(&full.values[k], &mut want);
                assert_eq!(b, &want, "parameter {k}");
                assert_eq!(lean.values[k], Value::Array(vec![]));
                as_bytes += 1;
            }
            None => assert_eq!(lean.values[k], full.values[k], "parameter {k}"),
        }
    }
    assert!(
        as_bytes == arrays && as_bytes < bytes.len(),
        "{as_bytes} of {}",
        bytes.len()
    );
    // With values kept, nothing is given as bytes.
    let (kept, bytes) = data::random_inputs_lean(&prog, &sizes, 42, true).unwrap();
    assert!(bytes.iter().all(Option::is_none));
    assert_eq!(kept.values, full.values);
}

/// `lift bench --check-size` at `--precision tf32`: a matrix product computed as tensor cores
/// compute it (operands cut to TF32, products summed in f32) is within the TF32 bounds, and
/// wrong under the f32 ones; a wrong product is wrong under both.
#[test]
fn check_at_tf32_accepts_tensor_core_products_that_f32_bounds_refuse() {
    let mm = "(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float K) N)) \
              (lambda (a bt) (map (lambda (row) (join (map (lambda (col) \
              (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col)))) bt))) a)))";
    let (m, k, n) = (8usize, 512usize, 4usize);
    let all = noise(m * k + n * k);
    let (a, bt) = all.split_at(m * k);
    let rows = |xs: &[f32], r: usize| -> Vec<Vec<f32>> { xs.chunks(k).take(r).map(<[f32]>::to_vec).collect() };
    let (a, bt) = (rows(a, m), rows(bt, n));
    let matrix = |rs: &[Vec<f32>]| {
        Value::Array(
            rs.iter()
                .map(|r| Value::Array(r.iter().map(|x| Value::Float(*x)).collect()))
                .collect(),
        )
    };
    let ins = data::Inputs {
        values: vec![matrix(&a), matrix(&bt)],
        sizes: [("M", m), ("K", k), ("N", n)]
            .into_iter()
            .map(|(s, v)| (s.to_string(), v as i64))
            .collect(),
    };
    let prog = compile(mm, &Options::types_only()).expect("mm").given;
    let cut = |x: f32| f32::from_bits(x.to_bits() & !0x1fff);
    let device = |round: &dyn Fn(f32) -> f32, off: f32| {
        let out: Vec<Vec<f32>> = a
            .iter()
            .map(|r| {
                bt.iter()
                    .map(|c| r.iter().zip(c).fold(0.0f32, |s, (x, y)| s + round(*x) * round(*y)) + off)
                    .collect()
            })
            .collect();
        matrix(&out)
    };
    let judge = |precision, got: &Value| match bounded_eval_at(&prog, &ins, CHECK_STEPS, precision) {
        Ok(r) => check_result(&r, &r, got),
        Err(c) => c,
    };
    let tensor_cores = device(&cut, 0.0);
    assert!(matches!(judge(ir::Precision::Tf32, &tensor_cores), Check::Ok { .. }));
    assert!(matches!(judge(ir::Precision::F32, &tensor_cores), Check::Wrong(_)));
    let f32_result = device(&|x| x, 0.0);
    assert!(matches!(judge(ir::Precision::Tf32, &f32_result), Check::Ok { .. }));
    let wrong = device(&cut, 1.0);
    assert!(matches!(judge(ir::Precision::Tf32, &wrong), Check::Wrong(_)));
}
