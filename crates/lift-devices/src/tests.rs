use super::*;

fn est(ns_per_elem: f64, fixed_ms: f64) -> Estimate {
    Estimate {
        ns_per_elem,
        fixed_ms,
        from: "test".into(),
        settled: true,
    }
}

#[test]
fn a_slow_device_gets_nothing_when_it_would_end_after_the_fast_one_alone() {
    // mm 4096³'s shape: a GPU row in 1.4 µs, a CPU row in 2 ms, the CPU's build and
    // copies 300 ms: the GPU alone ends at 56 ms, before the CPU could start.
    let s = choose(4096, &[est(1_400.0, 50.0), est(2_000_000.0, 300.0)]);
    assert_eq!(s.weights, vec![4096.0, 0.0]);
    assert!(s.why[1].starts_with("nothing: it would finish later"), "{}", s.why[1]);
    // Named the other way round, the GPU is still chosen first.
    let s = choose(4096, &[est(2_000_000.0, 300.0), est(1_400.0, 50.0)]);
    assert_eq!(s.weights, vec![0.0, 4096.0]);
}

#[test]
fn a_share_below_the_threshold_is_nothing() {
    // 100× slower without fixed costs: its share would be 1%.
    let s = choose(10_000, &[est(1_000.0, 0.0), est(100_000.0, 0.0)]);
    assert_eq!(s.weights[1], 0.0);
    assert!(s.why[1].contains("below 2%"), "{}", s.why[1]);
    assert_eq!(s.weights[0], 10_000.0);
}

#[test]
fn comparable_devices_share_so_that_they_end_together() {
    let s = choose(1_000, &[est(1_000_000.0, 10.0), est(3_000_000.0, 10.0)]);
    assert!(
        (s.weights[0] - 750.0).abs() < 1e-6 && (s.weights[1] - 250.0).abs() < 1e-6,
        "{:?}",
        s.weights
    );
    // A fixed cost moves work to the other device: both still end together.
    let s = choose(1_000, &[est(1_000_000.0, 10.0), est(1_000_000.0, 110.0)]);
    assert!((s.weights[0] - 550.0).abs() < 1e-6, "{:?}", s.weights);
    assert_eq!(slices(1_000, &s.weights), vec![0..550, 550..1000]);
}

#[test]
fn slices_cover_the_range_in_proportion() {
    assert_eq!(slices(10, &[1.0, 1.0]), vec![0..5, 5..10]);
    assert_eq!(slices(10, &[1.0, 1.0, 1.0]), vec![0..3, 3..7, 7..10]);
    assert_eq!(slices(100, &[9.0, 1.0]), vec![0..90, 90..100]);
    assert_eq!(slices(100, &[1000.0, 1.0]), vec![0..100, 100..100]);
    assert_eq!(slices(3, &[1.0, 1.0, 1.0, 1.0]), vec![0..1, 1..2, 2..2, 2..3]);
    assert_eq!(slices(0, &[1.0, 1.0]), vec![0..0, 0..0]);
}
