//! Whole-array reductions in one launch (issue 11.1): `rewrite`'s `grid-reduce-*` lowers
//! `reduce f z xs` of a parameter to `g` work-groups reading `xs` a grid apart (padded with `z`,
//! so any length) and one group combining their results, and the code generator runs that
//! group inside the first launch, in the group that takes the last ticket
//! (`codegen_opencl`'s `gen/reduce.rs`). The variant the cost model picks at the suite's size
//! (10^8) is checked at other lengths, on OpenCL against the interpreter, for `+`, `max` and
//! `min`.

use crate::{check_all, interp_options, json_close, parse_json};

/// The reductions: a name and `reduce`'s function and initial value.
const OPS: [(&str, &str); 3] = [("sum", "+ 0.0f"), ("max", "max -1000.0f"), ("min", "min 1000.0f")];

/// Lengths around the edges of the grid's padding and of a work-group, and one past a million.
const LENGTHS: [usize; 5] = [1, 255, 256, 257, 1_000_003];

fn program(op: &str) -> String {
    format!("(lift\n  (N)\n  ((array-type float N))\n  (lambda (xs)\n    (reduce {op} xs)))\n")
}

/// The cost model's best variant at `N = 10^8 + 1`: its description and source.
fn best_at_large(src: &str) -> Result<(String, String), String> {
    let prog = ir::parse(src).map_err(|e| e.message)?;
    let info = typeck::infer(&prog).map_err(|e| e.message)?;
    let opts = rewrite::Options {
        // not a multiple of 4: the variant read as `float4`s (`grid-reduce-v4-*`, whole vectors
        // only) is not among them, the scalar one serves any length (`indep_forms` runs the
        // `float4` one)
        sizes: [("N".to_string(), 100_000_001)].into_iter().collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let v = rewrite::explore(&prog, &info, &opts)
        .map_err(|e| e.message)?
        .variants
        .into_iter()
        .next()
        .ok_or("no variant")?;
    Ok((v.description, v.source))
}

/// `n` quarters in [-k/4, k/4] as a JSON array.
fn quarters(n: usize, k: usize, seed: u64) -> String {
    let mut r = ir::rng::XorShift::new(seed);
    let xs: Vec<String> = (0..n)
        .map(|_| format!("{}", (r.below(2 * k + 1) as f64 - k as f64) / 4.0))
        .collect();
    format!("[{}]", xs.join(", "))
}

/// Quarters in [-2, 2]: every sum of a million of them is exact in `float`, whatever the order.
fn input(n: usize, seed: u64) -> String {
    format!("{{\"xs\": {}}}", quarters(n, 8, seed))
}

#[test]
fn the_best_whole_array_reduction_is_one_launch_and_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    check_all(
        &OPS,
        |(name, _)| name,
        |(_, op)| {
            let src = program(op);
            let (description, variant) = best_at_large(&src)?;
            if !description.contains("one launch") {
                return Err(format!("the best variant is not one launch: {description}"));
            }
            let c = lift::compile(
                &variant,
                &lift::Options {
                    as_written: true,
                    ..lift::Options::default()
                },
            )
            .map_err(|e| e.message())?;
            let kernels = c.plan.as_ref().map_or(0, |p| p.kernels.len());
            if kernels != 1 {
                return Err(format!("{kernels} kernels, not one:\n{variant}"));
            }
            for (i, n) in LENGTHS.into_iter().enumerate() {
                let data = vec![lift::data::DataSource::Json(
                    input(n, 7 + i as u64),
                    format!("xs{n}.json"),
                )];
                let inputs = lift::data::load(&c.given, &data, &[]).map_err(|e| e.message)?;
                let got = lift::run_compiled(&c, &inputs, &opts).map_err(|e| format!("N={n}: {}", e.message()))?;
                let given = lift::compile(&src, &lift::Options::types_only()).map_err(|e| e.message())?;
                let want = lift::run_compiled(&given, &inputs, &interp_options()).map_err(|e| e.message())?;
                let (want, got) = (
                    parse_json(&want.json, "the interpreter's result"),
                    parse_json(&got.json, "the OpenCL result"),
                );
                if !json_close(&want, &got) {
                    return Err(format!("N={n}: expected {want}, got {got}\n{variant}"));
                }
            }
            Ok(())
        },
    );
}

/// A dot product `reduce + 0.0f (map (λp. get0 p * get1 p) (zip xs ys))`: its vectors padded
/// with zeros, the product fused into the work-items' loop, in one launch.
#[test]
fn the_best_dot_product_is_one_launch_and_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = lift::RunOptions {
        device,
        time: false,
        interp: false,
    };
    let src = include_str!("../../../../examples/hl_dot.lisp");
    let (description, variant) = best_at_large(src).expect("explores");
    assert!(description.contains("one launch"), "{description}\n{variant}");
    let c = lift::compile(
        &variant,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .expect("compiles");
    assert_eq!(c.plan.as_ref().map(|p| p.kernels.len()), Some(1), "{variant}");
    let given = lift::compile(src, &lift::Options::types_only()).expect("types");
    for (i, n) in LENGTHS.into_iter().enumerate() {
        // sixteenths of at most 1: a million of them sum exactly in `float`, whatever the order
        let json = format!(
            "{{\"xs\": {}, \"ys\": {}}}",
            quarters(n, 8, 40 + i as u64),
            quarters(n, 2, 80 + i as u64)
        );
        let data = vec![lift::data::DataSource::Json(json, format!("dot{n}.json"))];
        let inputs = lift::data::load(&c.given, &data, &[]).expect("inputs");
        let got = lift::run_compiled(&c, &inputs, &opts).unwrap_or_else(|e| panic!("N={n}: {}", e.message()));
        let want = lift::run_compiled(&given, &inputs, &interp_options()).expect("interpreter");
        let (want, got) = (
            parse_json(&want.json, "the interpreter's result"),
            parse_json(&got.json, "the OpenCL result"),
        );
        assert!(json_close(&want, &got), "N={n}: expected {want}, got {got}\n{variant}");
    }
}

/// The kernel of the one-launch sum at a length known only at run time (264 groups), as
/// `cl@onekernel__sum.snap`.
#[test]
fn one_launch_sum_kernel() {
    let src = program("+ 0.0f");
    let prog = ir::parse(&src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        top_k: 1,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &opts).expect("explores");
    let v = &ex.variants[0];
    assert!(v.description.contains("one launch"), "{ex}");
    let c = lift::compile(
        &v.source,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .expect("compiles");
    let cl = c.text(lift::Emit::Cl).expect("OpenCL");
    insta::with_settings!({
        snapshot_suffix => "onekernel__sum",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "lift explore of (reduce + 0.0f xs) at any N, variant 0, then --emit cl",
    }, {
        insta::assert_snapshot!("cl", format!(";; {}\n{cl}", v.description));
    });
}
