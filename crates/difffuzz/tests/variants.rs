//! The variants mode in CI: a few generated programs, each run as rewritten variants on the
//! OpenCL device (PoCL here) and compared with the interpreter.

use difffuzz::campaign;
use difffuzz::oracle::Class;
use difffuzz::variants::{self, Counts, Mode};

const SEED: u64 = 2026;

#[test]
fn variant_programs_type_check() {
    // The shapes are written for the rules; a program the front end refuses tests nothing.
    let n = 300;
    let refused: Vec<String> = (0..n)
        .filter_map(|i| {
            let (case, _) = campaign::case(SEED, Some((4, 2)), i);
            lift::compile(&case.src, &lift::Options::types_only())
                .err()
                .map(|e| format!("{}: {}\n{}", case.id, e.message(), case.src))
        })
        .collect();
    assert!(
        refused.len() * 100 <= n as usize * 2,
        "{} of {n} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

#[test]
fn the_choice_of_variants_is_deterministic_and_within_the_pool() {
    let m = Mode::of_case(SEED, 3, 2, 3);
    assert_eq!(m, Mode::of_case(SEED, 3, 2, 3));
    let picks = m.choose(10);
    assert_eq!(picks, m.choose(10));
    assert_eq!(picks.len(), 5);
    // the model's first two at the default work-group size, then three others
    assert_eq!(picks[..2], [(0, vec![]), (1, vec![])]);
    let mut ids: Vec<usize> = picks.iter().map(|p| p.0).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 5);
    assert!(ids.iter().all(|&i| i < 10));
    // fewer explored than asked: each at most once
    assert_eq!(m.choose(1), vec![(0, vec![])]);
    let json = m.to_json();
    assert_eq!(Mode::from_json(&json), Some(m));
}

#[test]
fn a_few_programs_agree_as_their_variants() {
    if !difffuzz::api::device_or_skip() {
        return;
    }
    let device = std::env::var("LIFT_TEST_DEVICE").ok().filter(|d| !d.is_empty());
    // a matrix product (explored with its sizes) and a sum and rows (explored without)
    let cases = [
        "(lift (M K N) ((array-type (array-type float K) M) (array-type (array-type float N) K))
           (lambda (a b) (map (lambda (row) (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col)))) (transpose b))) a)))",
        "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f (map (lambda (x) (* x x)) xs))))",
        "(lift (R C) ((array-type (array-type float C) R)) (lambda (a) (map (lambda (col) (reduce max -1.0e30f col)) (transpose a))))",
    ];
    let data = [
        r#"{"a": [[1,2,3,4],[0.5,-1,2,0],[3,3,-2,1],[0,0,1,-4],[1,1,1,1],[2,-2,0.25,4],[-1,0,0,2],[4,1,-3,0.5]],
            "b": [[1,0,2,-1,0.5,3,1,1],[2,1,-1,0,1,0,0.25,-2],[0,3,1,1,-1,2,1,0],[1,-1,0,2,0,1,-3,1]]}"#
            .to_string(),
        format!(
            "{{\"xs\": {:?}}}",
            (0..1000).map(|i| (i % 17) as f64 / 4.0 - 2.0).collect::<Vec<_>>()
        ),
        format!(
            "{{\"a\": {:?}}}",
            (0..16)
                .map(|r| (0..32).map(|c| ((r * 7 + c * 3) % 11) as f64 - 5.0).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        ),
    ];
    let mut total = Counts::default();
    for (k, (src, data)) in cases.iter().zip(&data).enumerate() {
        let mode = Mode {
            top: 1,
            random: 1,
            symbolic: k > 0,
            pick: 7,
        };
        let v = variants::evaluate(src, data, device.as_deref(), mode);
        assert_eq!(
            v.class,
            Class::Agree,
            "{src}\n{}: {}\n{}",
            v.class.name(),
            v.signature,
            v.detail
        );
        total.add(v.counts.as_ref().expect("counts"));
    }
    // every program explored and both of its variants run: equal to the interpreter, or (the
    // column maxima, explored without sizes: a split its 32 columns do not fill) refused
    let refused: u64 = total.refused.values().sum();
    assert_eq!((total.explored, total.run), (3, 6), "{}", total.render());
    assert!(total.agree >= 5 && total.agree + refused == 6, "{}", total.render());
}
