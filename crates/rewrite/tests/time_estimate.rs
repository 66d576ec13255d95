//! `cost::time`: the cost model's estimate in milliseconds. It counts a variant's kernels and
//! the bytes they move at least (inputs, result, intermediates written and read back), is bound
//! by that traffic where the work is small (a reduction, an element-wise map) and by the work
//! where it is large (a matrix product), and orders the variants of a program as their cost
//! does (the choice of variant is the cost's).

use rewrite::cost::time::{ordered, Kernels, BYTES_PER_MS, LAUNCH_MS, MS_PER_UNIT};
use rewrite::{explore, Options};
use std::collections::BTreeMap;

fn explored(src: &str, sizes: &[(&str, i64)]) -> rewrite::Exploration {
    let prog = ir::parse(src).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{}\n{src}", d.message));
    let sizes: BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let opts = Options {
        sizes: sizes.clone(),
        built_in: sizes,
        top_k: 16,
        ..Options::default()
    };
    explore(&prog, &info, &opts).expect("explores")
}

const SUM: &str = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";
const NN: &str = "(lift (N) ((array-type (tuple-type float float) N) float float) (lambda (locs lat lng) \
     (map (lambda (l) (sqrt (+ (* (- lat (get #0 l)) (- lat (get #0 l))) (* (- lng (get #1 l)) (- lng (get #1 l)))))) locs)))";
const MM: &str = "(lift (M N K) ((array-type (array-type float K) M) (array-type (array-type float K) N)) \
     (lambda (a bt) (map (lambda (row) (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col)))) bt)) a)))";

const TWO_PASSES: &str = "(lift (N) ((array-type float N)) (lambda (xs) \
     (let ys (map (lambda (x) (* x 2.0f)) xs) (map (lambda (y) (+ y 1.0f)) (map (lambda (y) (* y y)) ys)))))";

#[test]
fn the_traffic_is_the_inputs_read_and_the_result_written() {
    let ex = explored(NN, &[("N", 1 << 20)]);
    let k = ex.variants[0].kernels;
    // two floats a location and the two query floats in, a float a location out, one kernel
    assert_eq!(k.bytes, (1 << 20) as f64 * 12.0 + 8.0, "{ex}");
    assert_eq!((k.count, k.written), (1.0, (1 << 20) as f64), "{ex}");
}

#[test]
fn an_intermediate_result_is_written_and_read_back() {
    let ex = explored(TWO_PASSES, &[("N", 1 << 20)]);
    let n = (1 << 20) as f64;
    for v in &ex.variants {
        let k = v.kernels;
        // one kernel (the maps fused): the input and the result; two: and the intermediate twice
        let want = 8.0 * n + 8.0 * n * (k.count - 1.0);
        assert_eq!(k.bytes, want, "{}\n{ex}", v.description);
        assert_eq!(k.written, n * k.count, "{}\n{ex}", v.description);
    }
}

#[test]
fn a_whole_array_reduction_is_bound_by_reading_its_input() {
    // the cost charges a grid reduction a few thousand units whatever its length; its time
    // is the reading of 400 MB
    let ex = explored(SUM, &[("N", 100_000_000)]);
    let v = &ex.variants[0];
    let stream = v.kernels.bytes / BYTES_PER_MS;
    assert!(v.kernels.bytes >= 4e8, "{ex}");
    assert_eq!(v.ms, LAUNCH_MS * v.kernels.count + stream, "{ex}");
    assert!(stream > 0.1 && stream < 0.15, "{stream}");
    // a thousand times fewer elements: the launches and the tree remain
    let small = explored(SUM, &[("N", 100_000)]);
    let w = &small.variants[0];
    assert!(w.ms < v.ms / 10.0, "{small}");
    assert!(w.ms >= LAUNCH_MS, "{small}");
}

#[test]
fn an_element_wise_map_is_bound_by_its_traffic_not_by_its_writes_cost() {
    // nn's cost is mostly its writes (`MEM` an element); the time is the bytes it moves
    let ex = explored(NN, &[("N", 33_554_432)]);
    let v = &ex.variants[0];
    assert_eq!(v.ms, LAUNCH_MS + v.kernels.bytes / BYTES_PER_MS, "{ex}");
}

#[test]
fn a_matrix_product_is_bound_by_its_work() {
    let ex = explored(MM, &[("M", 4096), ("N", 4096), ("K", 4096)]);
    let v = &ex.variants[0];
    assert_eq!(
        v.ms,
        LAUNCH_MS * v.kernels.count + MS_PER_UNIT * v.kernels.work(v.cost),
        "{ex}"
    );
    assert!(v.ms > 10.0 * v.kernels.bytes / BYTES_PER_MS, "{} {:?}", v.ms, v.kernels);
}

#[test]
fn the_time_orders_the_variants_of_a_program_as_their_cost_does() {
    for (src, sizes) in [
        (SUM, vec![("N", 100_000_000)]),
        (NN, vec![("N", 33_554_432)]),
        (TWO_PASSES, vec![("N", 1 << 24)]),
        (MM, vec![("M", 1024), ("N", 1024), ("K", 1024)]),
        (MM, vec![("M", 64), ("N", 8192), ("K", 8192)]),
    ] {
        let ex = explored(src, &sizes);
        assert!(ex.variants.len() > 1, "{ex}");
        for w in ex.variants.windows(2) {
            assert!(w[0].cost <= w[1].cost, "{ex}");
            assert!(w[0].ms <= w[1].ms, "{ex}");
        }
        // each no faster than its kernels alone
        for v in &ex.variants {
            assert!(v.ms >= v.kernels.ms(v.cost), "{ex}");
        }
    }
    assert_eq!(ordered([2.0, 1.0, 3.0, 2.5]), vec![2.0, 2.0, 3.0, 3.0]);
    // and the kernels' estimate is a non-decreasing function of the cost
    let k = Kernels {
        count: 2.0,
        bytes: 1e8,
        written: 1e6,
    };
    let mut last = 0.0;
    for c in [0.0, 1e3, 1e4, 5e4, 1e5, 1e6, 1e7, 1e8] {
        assert!(k.ms(c) >= last);
        last = k.ms(c);
    }
}
