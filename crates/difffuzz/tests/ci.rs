//! The quick run for CI: a few hundred generated programs with a fixed seed, each on the
//! interpreter and on OpenCL. It fails on any defect (`wrong`, `crash`, `internal`, `driver`,
//! `timeout`) not listed in `known-failures.txt`, and on any listed case that no longer fails
//! that way, so the list only shrinks as the compiler is fixed. A clean refusal is no defect,
//! but a run that refuses too much tests little: at least [`MIN_AGREE_PERCENT`] of the
//! programs must agree, and at most [`MAX_NOT_SUPPORTED_PERCENT`] may be refused as "not
//! supported yet" by the back end.

use difffuzz::gen::Gen;
use difffuzz::oracle::{self, Class, Verdict};
use difffuzz::parse_known_failures;
use std::collections::BTreeMap;

/// The run that `known-failures.txt` describes; changing either means redoing the list.
const SEED: u64 = 2026;
const CASES: u64 = 120;
/// The share of programs that must run and agree with the interpreter (115 of 120 do).
const MIN_AGREE_PERCENT: usize = 90;
/// The share of programs that may be refused as "not supported yet" (1 of 120 is).
const MAX_NOT_SUPPORTED_PERCENT: usize = 1;

fn known() -> BTreeMap<String, (Class, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/known-failures.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_known_failures(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into_iter()
        .map(|k| (k.id, (k.class, k.defect)))
        .collect()
}

#[test]
fn known_failures_file_is_well_formed() {
    let k = known();
    assert!(
        k.keys().all(|id| id.starts_with(&format!("{SEED}:"))),
        "ids must be of seed {SEED}"
    );
}

#[test]
fn generated_programs_mostly_type_check() {
    // The generator builds by types, so the front end must accept nearly all of its programs;
    // a low rate means the generator drifted from the language and the fuzzer tests little.
    let n = 400;
    let ok = (0..n)
        .filter(|&i| {
            lift::compile(
                &Gen::case(SEED, i).src,
                &lift::Options {
                    types_only: true,
                    ..lift::Options::default()
                },
            )
            .is_ok()
        })
        .count();
    assert!(
        ok * 100 >= n as usize * 85,
        "only {ok} of {n} generated programs type-check"
    );
}

#[test]
fn generation_is_deterministic() {
    for i in 0..20 {
        let (a, b) = (Gen::case(7, i), Gen::case(7, i));
        assert_eq!((a.data(), a.src), (b.data(), b.src));
    }
}

#[test]
fn fixed_seed_has_only_known_failures() {
    if !difffuzz::api::device_or_skip() {
        return;
    }
    let device = std::env::var("LIFT_TEST_DEVICE").ok().filter(|d| !d.is_empty());
    // Two threads: the machine's cores, while most of the time goes to the OpenCL compiler.
    let results: Vec<(u64, Verdict)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let device = device.clone();
                s.spawn(move || {
                    (0..CASES)
                        .filter(|i| i % 2 == t)
                        .map(|i| {
                            let case = Gen::case(SEED, i);
                            (
                                i,
                                oracle::evaluate(&case.src, &case.data().to_string(), device.as_deref()),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("evaluate catches panics"))
            .collect()
    });
    let known = known();
    let mut problems = vec![];
    let mut counts: BTreeMap<Class, usize> = BTreeMap::new();
    let mut not_supported = vec![];
    for (i, v) in &results {
        *counts.entry(v.class).or_default() += 1;
        if v.class == Class::CleanError
            && [&v.signature, &v.detail]
                .iter()
                .any(|t| t.contains("not supported yet"))
        {
            not_supported.push(format!("{SEED}:{i}: {}", v.signature));
        }
        let id = format!("{SEED}:{i}");
        match (known.get(&id), v.class.is_defect()) {
            (None, false) => {}
            (Some((class, _)), true) if *class == v.class => {}
            (Some((class, defect)), _) => problems.push(format!(
                "{id}: listed as `{}` ({defect}) but now `{}`{}; update known-failures.txt",
                class.name(),
                v.class.name(),
                if v.class.is_defect() {
                    ""
                } else {
                    ": fixed, remove the line"
                }
            )),
            (None, true) => {
                let case = Gen::case(SEED, *i);
                problems.push(format!(
                    "{id}: {}: {}\n{}\nprogram:\n{}data: {}\n(`difffuzz show --seed {SEED} --index {i}` prints it again)",
                    v.class.name(),
                    v.signature,
                    v.detail,
                    case.src,
                    case.data()
                ));
            }
        }
    }
    eprintln!(
        "difffuzz: {CASES} cases of seed {SEED}: {}",
        counts
            .iter()
            .map(|(c, n)| format!("{} {n}", c.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(
        problems.is_empty(),
        "{} problem(s):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    let agree = counts.get(&Class::Agree).copied().unwrap_or(0);
    assert!(
        agree * 100 >= CASES as usize * MIN_AGREE_PERCENT,
        "only {agree} of {CASES} programs agree with the interpreter (at least {MIN_AGREE_PERCENT} % must)"
    );
    assert!(
        not_supported.len() * 100 <= CASES as usize * MAX_NOT_SUPPORTED_PERCENT,
        "{} of {CASES} programs are refused as not supported yet (at most {MAX_NOT_SUPPORTED_PERCENT} % may be):\n{}",
        not_supported.len(),
        not_supported.join("\n")
    );
}

/// A chaotic loop (found by seed 17, case 5715): `x ↦ (-2 - x) sin x`, 136 times. An ulp of
/// difference in `sin` (OpenCL allows four) grows until the results share nothing, yet nothing
/// was miscompiled (one step agrees exactly). The interpreter's error analysis bounds none of
/// the elements, so the verdict is `unbounded`, not `wrong`.
#[test]
fn chaotic_loops_are_unbounded_not_wrong() {
    if !difffuzz::api::device_or_skip() {
        return;
    }
    let src = "(lift (K N) ((array-type float N) float (array-type int N) (array-type int K))
  (lambda (xs ys zs steps)
    (iterate #8 (lambda (s1) (iterate K (lambda (s2) (toGlobal (mapGlb (lambda (x3) (min 64.0f (max -64.0f (* (- -2.0f x3) (sin x3))))) s2))) s1)) xs)))";
    let data = |k: usize| {
        format!(
            "{{\"steps\":{:?},\"xs\":[1.0,3.0,-1.0,3.0,2.5,-3.5,1.75,-1.5,-0.25,0.5,1.75,3.75,-3.0,-4.0,0.0,0.0],\"ys\":1.25,\"zs\":[-6,4,3,1,4,3,2,7,5,-6,7,-8,7,0,3,-6]}}",
            vec![1; k]
        )
    };
    let one = oracle::evaluate(src, &data(1), None);
    assert_eq!(one.class, Class::Agree, "{}", one.detail);
    let many = oracle::evaluate(src, &data(17), None);
    assert!(
        matches!(many.class, Class::Unbounded | Class::Agree),
        "{:?}: {}",
        many.class,
        many.detail
    );
}

/// Seed 20, case 39448: an `iterate-until` whose condition compares values of a chaotic
/// iteration. The bounded interpretation stops at that comparison (rounding can change it), so
/// no element has a bound; the verdict is `unbounded`, not `wrong` (it was `wrong` before).
#[test]
fn a_decision_rounding_can_change_is_unbounded_not_wrong() {
    if !difffuzz::api::device_or_skip() {
        return;
    }
    let src = r#"(lift
  (K N)
  ((array-type float N) int (array-type float N) (array-type int K))
  (lambda (xs ys zs steps)
    (iterate-until #20 (lambda (prev1 next2) (join (mapGlb (lambda (c) (toGlobal (reduceSeq (lambda (acc3 x4) (and acc3 (> x4 x4))) true c))) (split N next2)))) (lambda (s5) (iterate K (lambda (s6) (toGlobal (mapGlb (lambda (x7) (min 64.0f (max -64.0f ((lambda (v8) (cos v8)) (dot (vec x7 0.25f x7 x7) (vec x7 x7 x7 3.0f)))))) s6))) s5)) zs)))"#;
    let data = r#"{"steps":[-7,6,-2,0,1,-3,-8,4,3,-7,4,8,-3,-2,0,-2,0],"xs":[3.75,-1.0,-1.25,0.0,2.5,3.5,0.75,1.0,3.25,-3.25,2.5,-3.5,-2.25,2.75,-2.25,-3.5,0.5,-3.25,0.75,2.5,-3.75,1.5,1.25,3.75,-3.5,-1.75,1.25,2.5,2.75,1.5,1.5,-2.75,-0.25,-2.25,0.75,2.5,-3.75,2.0,4.0,-1.5,4.0,1.25,1.5,-3.25,-3.5,-0.25,0.25,-2.25],"ys":-3,"zs":[-1.5,0.0,-2.25,1.75,-3.25,1.25,-3.5,-2.0,0.5,0.75,-1.0,-2.25,0.75,3.25,-2.75,3.0,1.5,0.5,-0.25,-4.0,-0.25,1.25,-1.5,-0.25,0.75,-2.25,-3.5,2.5,-1.0,2.25,-1.5,-1.75,0.25,0.25,3.0,-0.75,1.5,1.5,3.75,-2.25,4.0,-3.0,-1.25,3.75,0.5,-0.25,0.75,-2.25]}"#;
    let v = oracle::evaluate(src, data, None);
    assert!(
        matches!(v.class, Class::Unbounded | Class::Agree),
        "{:?}: {}",
        v.class,
        v.detail
    );
}
