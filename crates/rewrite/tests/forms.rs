//! Formulations of the suite's computations written the way a user first writes them
//! (`tests/forms/*.lisp`: a `zip` the other way round, dot products taken `at 0` and bound with
//! `let`, a commuted operator lambda, a reduction written in two levels, a transpose of tiles,
//! a stencil by index arithmetic or between transposes): exploration must rank
//! first a variant that costs no more than 1.05× what the suite's own file gets, and every form
//! must compute what the interpreter computes for it, as written and as explored.

use ir::interp::{eval, Value};
use ir::rng::XorShift;
use ir::{Scalar, Type};
use rewrite::{explore, Options};
use std::collections::BTreeMap;

/// (form, the suite's file of the same computation, its large sizes, small sizes for the
/// interpreter)
const FORMS: &[(&str, &str, &str, &str)] = &[
    ("gemv_t_zip_swapped", "gemv_t", "M=8192 N=8192", "M=64 N=32"),
    ("atax_at_let", "atax", "M=8192 N=8192", "M=64 N=32"),
    ("gesummv_at", "gesummv", "M=8192 N=8192", "M=64 N=32"),
    ("kmeans_at", "kmeans_rows", "P=819200 F=34 C=5", "P=128 F=34 C=5"),
    ("sum_commuted", "sum", "N=100000000", "N=8192"),
    ("sum_chunks", "sum", "N=100000000", "N=8192"),
    ("transpose_tiled", "transpose", "M=8192 N=8192", "M=64 N=32"),
    ("conv_col_generate", "convolution_col", "H=8192 W=8192", "H=32 W=24"),
    ("conv_col_transpose", "convolution_col", "H=8192 W=8192", "H=32 W=24"),
];

fn sizes(s: &str) -> BTreeMap<String, i64> {
    s.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("NAME=value");
            (k.to_string(), v.parse().expect("a size"))
        })
        .collect()
}

fn read(path: &str) -> (ir::Program, typeck::TypeInfo) {
    let dir = env!("CARGO_MANIFEST_DIR");
    let src = std::fs::read_to_string(format!("{dir}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"));
    let prog = ir::parse(&src).unwrap_or_else(|d| panic!("{path}: {}", d.message));
    let info = typeck::infer(&prog).unwrap_or_else(|d| panic!("{path}: {}", d.message));
    (prog, info)
}

fn first(path: &str, sizes: &BTreeMap<String, i64>) -> rewrite::Variant {
    let (prog, info) = read(path);
    let opts = Options {
        sizes: sizes.clone(),
        built_in: sizes.clone(),
        ..Options::default()
    };
    let ex = explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{path}: {}", d.message));
    ex.variants.into_iter().next().expect("a variant")
}

#[test]
fn each_form_ranks_first_a_variant_within_5_percent_of_its_suite_files() {
    let mut report = vec![];
    for (form, suite, large, _) in FORMS {
        let sizes = sizes(large);
        let f = first(&format!("tests/forms/{form}.lisp"), &sizes);
        let s = first(&format!("../../bench/cgo17/{suite}.lisp"), &sizes);
        if f.cost > 1.05 * s.cost {
            report.push(format!(
                "{form}: {:.1} against {suite}'s {:.1}\n  {}\n  {}",
                f.cost, s.cost, f.description, s.description
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// Integer-valued floats in [-2, 2] (sums of them are exact in any order).
fn random(t: &Type, sizes: &BTreeMap<String, i64>, rng: &mut XorShift) -> Value {
    match t {
        Type::Scalar(Scalar::Float) => Value::Float(rng.below(5) as f32 - 2.0),
        Type::Array(e, n) => {
            let n = n.eval(&|v| sizes.get(v).copied()).expect("parameter length");
            Value::Array((0..n).map(|_| random(e, sizes, rng)).collect())
        }
        other => panic!("no random values of type {other}"),
    }
}

#[test]
fn each_form_as_normalised_and_as_explored_equals_the_interpreter() {
    for (i, (form, _, _, small)) in FORMS.iter().enumerate() {
        let path = format!("tests/forms/{form}.lisp");
        let (prog, info) = read(&path);
        let sizes = sizes(small);
        let lookup = |n: &str| sizes.get(n).copied();
        let mut rng = XorShift::new(17 + i as u64);
        let args: Vec<Value> = prog.params.iter().map(|p| random(&p.ty, &sizes, &mut rng)).collect();
        let expect = eval(&prog, &args, &lookup).unwrap_or_else(|e| panic!("{form}: {}", e.message));
        let (normal, _) = rewrite::normalise::normalise(&prog, &info).expect("every form has something to normalise");
        let got = eval(&normal, &args, &lookup).unwrap_or_else(|e| panic!("{form} normalised: {}", e.message));
        assert!(
            ir::interp::approx_eq(&expect, &got, 1e-4),
            "{form} normalised:\n{}",
            ir::print::program(&normal)
        );
        let opts = Options {
            sizes: sizes.clone(),
            top_k: 1000,
            ..Options::default()
        };
        let ex = explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{form}: {}", d.message));
        for v in &ex.variants {
            let got =
                eval(&v.program, &args, &lookup).unwrap_or_else(|e| panic!("{form}: {}\n{}", e.message, v.source));
            assert!(
                ir::interp::approx_eq(&expect, &got, 1e-4),
                "{form}: variant {}\n{}",
                v.description,
                v.source
            );
        }
    }
}

/// The e-graph of every suite program and form stays far below the node limit (the suite's
/// largest, mm and bmm, hold about 3,500 nodes): normalisation adds no second copy of a program.
#[test]
fn explorations_of_the_suite_and_the_forms_stay_small() {
    let mut programs: Vec<(String, String)> = FORMS
        .iter()
        .map(|(form, _, large, _)| (format!("tests/forms/{form}.lisp"), large.to_string()))
        .collect();
    for suite in ["cgo17", "indep"] {
        let dir = env!("CARGO_MANIFEST_DIR");
        let tsv = std::fs::read_to_string(format!("{dir}/../../bench/{suite}/suite.tsv")).expect("suite.tsv");
        for line in tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
            let cols: Vec<&str> = line.split('\t').collect();
            programs.push((format!("../../{}", cols[3]), cols[4].to_string()));
        }
    }
    for (path, large) in programs {
        let (prog, info) = read(&path);
        let opts = Options {
            sizes: sizes(&large),
            ..Options::default()
        };
        let ex = explore(&prog, &info, &opts).unwrap_or_else(|d| panic!("{path}: {}", d.message));
        assert!(ex.stats.nodes <= 5000, "{path}: {} e-graph nodes", ex.stats.nodes);
    }
}
