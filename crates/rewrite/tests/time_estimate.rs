//! `cost::time`: the cost model's estimate in milliseconds. It counts what every variant of a
//! program reads and writes, is bound by that traffic where the work is small (a reduction, an
//! element-wise map) and by the work where it is large (a matrix product), and orders the
//! variants of a program as their cost does (the choice of variant is the cost's).

use rewrite::cost::time::{Traffic, BYTES_PER_MS, LAUNCH_MS, MS_PER_UNIT};
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

#[test]
fn the_traffic_is_the_inputs_read_and_the_result_written() {
    let ex = explored(NN, &[("N", 1 << 20)]);
    let t = ex.variants[0].traffic;
    // two floats a location and the two query floats in, a float a location out
    assert_eq!(t.bytes, (1 << 20) as f64 * 12.0 + 8.0, "{t:?}");
    assert_eq!(t.outputs, (1 << 20) as f64, "{t:?}");
    let s = explored(SUM, &[("N", 1000)]).variants[0].traffic;
    assert_eq!((s.bytes, s.outputs), (4004.0, 1.0), "{s:?}");
}

#[test]
fn a_whole_array_reduction_is_bound_by_reading_its_input() {
    // the cost charges a grid reduction a few thousand units whatever its length; its time
    // is the reading of 400 MB
    let ex = explored(SUM, &[("N", 100_000_000)]);
    let v = &ex.variants[0];
    let stream = v.traffic.bytes / BYTES_PER_MS;
    assert_eq!(v.traffic.ms(v.cost), LAUNCH_MS + stream, "{ex}");
    assert!(stream > 0.1 && stream < 0.15, "{stream}");
    // a thousand times fewer elements: the launch and the tree remain
    let small = explored(SUM, &[("N", 100_000)]);
    let w = &small.variants[0];
    assert!(w.traffic.ms(w.cost) < v.traffic.ms(v.cost) / 10.0, "{small}");
    assert!(w.traffic.ms(w.cost) > LAUNCH_MS, "{small}");
}

#[test]
fn an_element_wise_map_is_bound_by_its_traffic_not_by_its_writes_cost() {
    // nn's cost is mostly its writes (`MEM` an element); the time is the bytes it moves
    let ex = explored(NN, &[("N", 33_554_432)]);
    let v = &ex.variants[0];
    assert_eq!(v.traffic.ms(v.cost), LAUNCH_MS + v.traffic.bytes / BYTES_PER_MS, "{ex}");
}

#[test]
fn a_matrix_product_is_bound_by_its_work() {
    let ex = explored(MM, &[("M", 4096), ("N", 4096), ("K", 4096)]);
    let v = &ex.variants[0];
    let ms = v.traffic.ms(v.cost);
    assert_eq!(ms, LAUNCH_MS + MS_PER_UNIT * v.traffic.work(v.cost), "{ex}");
    assert!(ms > 10.0 * v.traffic.bytes / BYTES_PER_MS, "{ms} {:?}", v.traffic);
}

#[test]
fn the_time_orders_the_variants_of_a_program_as_their_cost_does() {
    for (src, sizes) in [
        (SUM, vec![("N", 100_000_000)]),
        (NN, vec![("N", 33_554_432)]),
        (MM, vec![("M", 1024), ("N", 1024), ("K", 1024)]),
        (MM, vec![("M", 64), ("N", 8192), ("K", 8192)]),
    ] {
        let ex = explored(src, &sizes);
        assert!(ex.variants.len() > 1, "{ex}");
        for w in ex.variants.windows(2) {
            assert!(w[0].cost <= w[1].cost, "{ex}");
            assert!(w[0].traffic == w[1].traffic, "{ex}");
            assert!(w[0].traffic.ms(w[0].cost) <= w[1].traffic.ms(w[1].cost), "{ex}");
        }
    }
    // and as a function of the cost alone, for any traffic
    let t = Traffic {
        bytes: 1e8,
        outputs: 1e6,
    };
    let mut last = 0.0;
    for c in [0.0, 1e3, 1e4, 5e4, 1e5, 1e6, 1e7, 1e8] {
        assert!(t.ms(c) >= last);
        last = t.ms(c);
    }
}
