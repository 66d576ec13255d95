//! The mutator's property on the suite (bench/cgo17 and bench/indep, fixed seed): every mutant
//! type-checks, computes what the interpreter computes for the original, and exploration at the
//! suite's large sizes ranks first a variant costing at most 1.05× the original's first.

use ir::interp::{eval, Value};
use ir::rng::XorShift;
use ir::{Scalar, Type};
use rewrite::{explore, Options};
use std::collections::BTreeMap;

/// Mutants a program; with 28 programs, over two hundred in all.
const PER_PROGRAM: usize = 8;
const STEPS: usize = 3;
const SEED: u64 = 2811;

/// Sizes for the interpreter: the suite's medium sizes, each at most this.
const SMALL: i64 = 32;

fn sizes(s: &str) -> BTreeMap<String, i64> {
    s.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("NAME=value");
            (k.to_string(), v.parse().expect("a size"))
        })
        .collect()
}

/// Integer-valued floats in [-2, 2] (sums exact in any order); ints below `ints` (valid indices
/// into any array of the program, as md's neighbour lists are).
fn random(t: &Type, sizes: &BTreeMap<String, i64>, ints: i64, rng: &mut XorShift) -> Value {
    match t {
        Type::Scalar(Scalar::Float) => Value::Float(rng.below(5) as f32 - 2.0),
        Type::Scalar(Scalar::Int) => Value::Int(rng.below(ints as usize) as i32),
        Type::Vector(Scalar::Float, w) => {
            Value::Vector((0..*w).map(|_| Value::Float(rng.below(5) as f32 - 2.0)).collect())
        }
        Type::Tuple(ts) => Value::Tuple(ts.iter().map(|t| random(t, sizes, ints, rng)).collect()),
        Type::Array(e, n) => {
            let n = n.eval(&|v| sizes.get(v).copied()).expect("parameter length");
            Value::Array((0..n).map(|_| random(e, sizes, ints, rng)).collect())
        }
        other => panic!("no random values of type {other}"),
    }
}

/// Equal results: floats within a relative 1e-4, or both the same infinity, or both NaN (md's
/// and n-body's random particles meet, and `1/0` then flows into the forces the same way
/// whatever the spelling: the mutations keep IEEE results exactly).
fn same(a: &Value, b: &Value) -> bool {
    let c =
        |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= 1e-4 * x.abs().max(y.abs()).max(1.0);
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => c(f64::from(*x), f64::from(*y)),
        (Value::Double(x), Value::Double(y)) => c(*x, *y),
        (Value::Array(x), Value::Array(y))
        | (Value::Tuple(x), Value::Tuple(y))
        | (Value::Vector(x), Value::Vector(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        _ => a == b,
    }
}

fn first_cost(prog: &ir::Program, info: &typeck::TypeInfo, large: &BTreeMap<String, i64>) -> Result<f64, String> {
    let opts = Options {
        sizes: large.clone(),
        built_in: large.clone(),
        ..Options::default()
    };
    let ex = explore(prog, info, &opts).map_err(|d| d.message)?;
    Ok(ex.variants[0].cost)
}

/// What a run of the property found.
struct Run {
    total: usize,
    kinds: std::collections::BTreeSet<&'static str>,
    failures: Vec<String>,
    /// The largest ratio of a mutant's first cost to its original's, and that mutant.
    worst: (f64, String),
}

/// Every program of the suite, `per_program` mutants each of at most `steps` mutations, from
/// `seed`; `progress` reports each program's count on stderr (the long run).
fn check_suite(suites: &[&str], per_program: usize, steps: usize, seed: u64, progress: bool) -> Run {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut run = Run {
        total: 0,
        kinds: std::collections::BTreeSet::new(),
        failures: vec![],
        worst: (0.0, String::new()),
    };
    for &suite in suites {
        let tsv = std::fs::read_to_string(format!("{root}/bench/{suite}/suite.tsv")).expect("suite.tsv");
        for (row, line) in tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).enumerate() {
            let cols: Vec<&str> = line.split('\t').collect();
            let (file, large, medium) = (cols[3], sizes(cols[4]), sizes(cols[5]));
            let small: BTreeMap<String, i64> = medium.iter().map(|(k, v)| (k.clone(), (*v).min(SMALL))).collect();
            let ints = *small.values().min().expect("a size");
            let src = std::fs::read_to_string(format!("{root}/{file}")).expect("program");
            let prog = ir::parse(&src).expect("parses");
            let info = typeck::infer(&prog).expect("types");
            let lookup = |n: &str| small.get(n).copied();
            let mut rng = XorShift::new(seed + row as u64);
            let args: Vec<Value> = prog
                .params
                .iter()
                .map(|p| random(&p.ty, &small, ints, &mut rng))
                .collect();
            let expect = eval(&prog, &args, &lookup).expect("the original runs");
            let cost = first_cost(&prog, &info, &large).expect("the original explores");
            let mseed = seed ^ (row as u64 + 1) << 8 ^ u64::from(suite == "indep");
            let ms = mutate::mutants(&src, mseed, per_program, steps).expect("reads");
            for m in &ms {
                run.total += 1;
                run.kinds.extend(m.mutations.iter().copied());
                let what = format!("{file} by {:?}:\n{}", m.mutations, m.src);
                let mprog = match ir::parse(&m.src) {
                    Ok(p) => p,
                    Err(d) => {
                        run.failures.push(format!("does not parse ({}): {what}", d.message));
                        continue;
                    }
                };
                let minfo = match typeck::infer(&mprog) {
                    Ok(i) => i,
                    Err(d) => {
                        run.failures
                            .push(format!("does not type-check ({}): {what}", d.message));
                        continue;
                    }
                };
                match eval(&mprog, &args, &lookup) {
                    Ok(got) if same(&expect, &got) => {}
                    Ok(_) => run.failures.push(format!("computes something else: {what}")),
                    Err(e) => run.failures.push(format!("fails to run ({}): {what}", e.message)),
                }
                match first_cost(&mprog, &minfo, &large) {
                    Ok(c) => {
                        if c / cost > run.worst.0 {
                            run.worst = (c / cost, what.clone());
                        }
                        if c > 1.05 * cost {
                            run.failures.push(format!("costs {c:.1} against {cost:.1}: {what}"));
                        }
                    }
                    Err(e) => run.failures.push(format!("explores to nothing ({e}): {what}")),
                }
            }
            if progress {
                eprintln!(
                    "{file}: {} mutants, {} in all, {} failures",
                    ms.len(),
                    run.total,
                    run.failures.len()
                );
            }
        }
    }
    run
}

#[test]
fn suite_mutants_equal_the_interpreter_and_cost_at_most_5_percent_more() {
    let run = check_suite(&["cgo17", "indep"], PER_PROGRAM, STEPS, SEED, false);
    assert!(run.total >= 200, "only {} mutants", run.total);
    let unused: Vec<_> = mutate::KINDS.iter().filter(|k| !run.kinds.contains(*k)).collect();
    assert!(unused.is_empty(), "mutations never applied to the suite: {unused:?}");
    assert!(
        run.failures.is_empty(),
        "{} of {} mutants:\n{}",
        run.failures.len(),
        run.total,
        run.failures.join("\n\n")
    );
}

/// The long run (`cargo test --release -p mutate -- --ignored`): `MUTANTS_PER_PROGRAM`
/// (default 400) mutants of each program of up to `MUTANTS_STEPS` (default 6) mutations from
/// `MUTANTS_SEED` (default 2812), over ten thousand in all; the same property. `MUTANTS_SUITES`
/// (default `cgo17,indep`) takes the suites apart, to run them side by side.
#[test]
#[ignore = "the long run: minutes in release"]
fn suite_mutants_long_run() {
    let var = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (per, steps, seed) = (
        var("MUTANTS_PER_PROGRAM", 400),
        var("MUTANTS_STEPS", 6),
        var("MUTANTS_SEED", 2812),
    );
    let suites = std::env::var("MUTANTS_SUITES").unwrap_or_else(|_| "cgo17,indep".into());
    let suites: Vec<&str> = suites.split(',').collect();
    let run = check_suite(&suites, per as usize, steps as usize, seed, true);
    eprintln!(
        "seed {seed}, {per} a program, up to {steps} mutations: {} mutants, {} failures, kinds {:?}",
        run.total,
        run.failures.len(),
        run.kinds
    );
    eprintln!("largest cost ratio {:.4}: {}", run.worst.0, run.worst.1);
    assert!(
        run.failures.is_empty(),
        "{} of {} mutants:\n{}",
        run.failures.len(),
        run.total,
        run.failures.join("\n\n")
    );
}
