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

#[test]
fn suite_mutants_equal_the_interpreter_and_cost_at_most_5_percent_more() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut failures = vec![];
    let mut total = 0;
    let mut kinds = std::collections::BTreeSet::new();
    for suite in ["cgo17", "indep"] {
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
            let mut rng = XorShift::new(SEED + row as u64);
            let args: Vec<Value> = prog
                .params
                .iter()
                .map(|p| random(&p.ty, &small, ints, &mut rng))
                .collect();
            let expect = eval(&prog, &args, &lookup).expect("the original runs");
            let cost = first_cost(&prog, &info, &large).expect("the original explores");
            let seed = SEED ^ (row as u64 + 1) << 8 ^ u64::from(suite == "indep");
            for m in mutate::mutants(&src, seed, PER_PROGRAM, STEPS).expect("reads") {
                total += 1;
                kinds.extend(m.mutations.iter().copied());
                let what = format!("{file} by {:?}:\n{}", m.mutations, m.src);
                let mprog = match ir::parse(&m.src) {
                    Ok(p) => p,
                    Err(d) => {
                        failures.push(format!("does not parse ({}): {what}", d.message));
                        continue;
                    }
                };
                let minfo = match typeck::infer(&mprog) {
                    Ok(i) => i,
                    Err(d) => {
                        failures.push(format!("does not type-check ({}): {what}", d.message));
                        continue;
                    }
                };
                match eval(&mprog, &args, &lookup) {
                    Ok(got) if same(&expect, &got) => {}
                    Ok(_) => failures.push(format!("computes something else: {what}")),
                    Err(e) => failures.push(format!("fails to run ({}): {what}", e.message)),
                }
                match first_cost(&mprog, &minfo, &large) {
                    Ok(c) if c <= 1.05 * cost => {}
                    Ok(c) => failures.push(format!("costs {c:.1} against {cost:.1}: {what}")),
                    Err(e) => failures.push(format!("explores to nothing ({e}): {what}")),
                }
            }
        }
    }
    assert!(total >= 200, "only {total} mutants");
    let unused: Vec<_> = mutate::KINDS.iter().filter(|k| !kinds.contains(*k)).collect();
    assert!(unused.is_empty(), "mutations never applied to the suite: {unused:?}");
    assert!(
        failures.is_empty(),
        "{} of {total} mutants:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
