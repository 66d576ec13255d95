//! A batch of small matrix products written independently of the suite (issue 11,
//! `bench/indep/bmm.lisp`): at the benchmark's sizes the cost model's best variant is the
//! register-blocked product under the batch's map (`batch-reg-block-*`), the batch the grid's
//! third dimension; its kernel is a snapshot (`cl@batch_rules__bmm.snap`). Its results equal
//! the interpreter's on OpenCL in `indep_forms.rs` (the cost model's first variants).

const BMM: &str = include_str!("../../../../bench/indep/bmm.lisp");

/// The kernel of the batched register-blocked `bench/indep/bmm.lisp` at B=4096, M=K=N=32.
#[test]
fn batched_register_blocked_bmm_kernel() {
    let prog = ir::parse(BMM).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let opts = rewrite::Options {
        sizes: [("B", 4096), ("M", 32), ("K", 32), ("N", 32)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        top_k: 1,
        ..rewrite::Options::default()
    };
    let v = rewrite::explore(&prog, &info, &opts)
        .expect("explores")
        .variants
        .into_iter()
        .next()
        .expect("a variant");
    assert!(
        v.description.contains("mapWrg2 over a batch of 4096"),
        "{}",
        v.description
    );
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
        snapshot_suffix => "batch_rules__bmm",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "lift explore of bench/indep/bmm.lisp at B=4096 M=K=N=32, variant 0, then --emit cl",
    }, {
        insta::assert_snapshot!("cl", format!(";; {}\n{cl}", v.description));
    });
}
