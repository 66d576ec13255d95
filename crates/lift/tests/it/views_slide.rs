//! Slides and pads inside a plain `map` are views (issue 11): `map (λr. slide 3 1 r) g`, the
//! first step of LANGUAGE.md's `slide2d`, and `map (λr. pad-clamp 1 1 r) g` are read where a
//! kernel reads them, not stored by a kernel before it. Jacobi written with `slide2d`
//! (`bench/indep/jacobi2d.lisp`) gets the variants of `bench/indep/jacobi.lisp`; programs that
//! read such maps, and one that returns one (copied: a slide's windows cannot be written
//! through), equal the interpreter on OpenCL.

use crate::{check_all, interp_options, json_close, parse_json};

const JACOBI2D: &str = include_str!("../../../../bench/indep/jacobi2d.lisp");

/// `n` eighths in [-1, 1] (exact sums in `float` at these sizes, whatever the order).
fn eighths(r: &mut ir::rng::XorShift, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| format!("{}", (r.below(17) as f64 - 8.0) / 8.0))
        .collect()
}

/// JSON of a `rows × cols` matrix of eighths.
fn matrix(seed: u64, rows: usize, cols: usize) -> String {
    let mut r = ir::rng::XorShift::new(seed);
    let rows: Vec<String> = (0..rows)
        .map(|_| format!("[{}]", eighths(&mut r, cols).join(",")))
        .collect();
    format!("[{}]", rows.join(","))
}

/// Runs `src` (low level, as written) on OpenCL and by the interpreter on `g` and compares.
fn equals_interpreter(name: &str, src: &str, data: &str, device: &Option<String>) -> Result<(), String> {
    let c = lift::compile(
        src,
        &lift::Options {
            as_written: true,
            ..lift::Options::default()
        },
    )
    .map_err(|e| format!("{name}: {}", e.message()))?;
    let data = vec![lift::data::DataSource::Json(data.to_string(), format!("{name}.json"))];
    let inputs = lift::data::load(&c.given, &data, &[]).map_err(|e| e.message)?;
    let opts = lift::RunOptions {
        device: device.clone(),
        time: false,
        interp: false,
    };
    let got = lift::run_compiled(&c, &inputs, &opts).map_err(|e| format!("{name} on OpenCL: {}", e.message()))?;
    let given = lift::compile(src, &lift::Options::types_only()).map_err(|e| e.message())?;
    let want = lift::run_compiled(&given, &inputs, &interp_options()).map_err(|e| e.message())?;
    let (want, got) = (
        parse_json(&want.json, "the interpreter's result"),
        parse_json(&got.json, "the OpenCL result"),
    );
    if !json_close(&want, &got) {
        return Err(format!("{name}: expected {want}, got {got}"));
    }
    Ok(())
}

#[test]
fn slide_views_jacobi2d_variants_read_the_grid_and_equal_the_interpreter() {
    let prog = ir::parse(JACOBI2D).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let ropts = rewrite::Options {
        sizes: [("H".to_string(), 8192), ("W".to_string(), 8192)].into_iter().collect(),
        top_k: 8,
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &ropts).expect("explores");
    // no variant stores the windows of the rows in a kernel of their own
    for v in &ex.variants {
        assert!(
            !v.description.contains("separate kernel"),
            "{}\n{}",
            v.description,
            v.source
        );
    }
    // the cost model's first is the fastest jacobi variant timed on the H200: a column of 8
    // outputs a work-item from its strip in registers (0.144 ms against 0.223 for four outputs
    // a work-item, `bench/results/stencil-rules-nvidia-h200-2026-12-02.md`)
    assert!(
        ex.variants[0]
            .description
            .starts_with("stencil columns of 8 outputs a work-item"),
        "{ex}"
    );
    let Some(device) = crate::opencl::device() else { return };
    let data = format!("{{\"g\": {}}}", matrix(5, 130, 258));
    check_all(
        &ex.variants,
        |v| &v.description,
        |v| {
            let c = lift::compile(
                &v.source,
                &lift::Options {
                    as_written: true,
                    ..lift::Options::default()
                },
            )
            .map_err(|e| e.message())?;
            let kernels = c.plan.as_ref().map_or(0, |p| p.kernels.len());
            if kernels != 1 {
                return Err(format!("{kernels} kernels:\n{}", v.source));
            }
            equals_interpreter("jacobi2d", &v.source, &data, &device)
        },
    );
}

/// Low-level programs reading (or returning) maps of slides and pads: a name, the source and
/// the number of kernels its plan must have.
const PROGRAMS: [(&str, &str, usize); 5] = [
    // slide2d by hand: every 3 × 3 window's centre plus its corners
    (
        "slide2d",
        "(lift (H W) ((array-type (array-type float (+ W 2)) (+ H 2))) (lambda (g) \
         (mapGlb1 (lambda (rows) (mapGlb (lambda (w) (+ (+ (at 1 (at 1 w)) (at 0 (at 0 w))) (at 2 (at 2 w)))) \
         (transpose rows))) (slide #3 #1 (map (lambda (r) (slide #3 #1 r)) g)))))",
        1,
    ),
    // clamped windows of every row: a row convolution's view
    (
        "rows_clamped",
        "(lift (H W) ((array-type (array-type float W) H)) (lambda (g) \
         (mapGlb1 (lambda (ws) (mapGlb (lambda (w) (- (* 2.0f (at 0 w)) (at 2 w))) ws)) \
         (map (lambda (r) (slide #3 #1 (pad-clamp #1 #1 r))) g))))",
        1,
    ),
    // a zero border on both dimensions (pad inside maps, twice), then 2-D windows
    (
        "pad2d",
        "(define (pad2d xss) (transpose (map (lambda (c) (pad #1 #1 0.0f c)) (transpose (map (lambda (r) (pad #1 #1 0.0f r)) xss))))) \
         (lift (H W) ((array-type (array-type float W) H)) (lambda (g) \
         (mapGlb1 (lambda (rows) (mapGlb (lambda (w) (+ (+ (at 1 (at 0 w)) (at 0 (at 1 w))) (+ (at 2 (at 1 w)) (at 1 (at 2 w))))) \
         (transpose rows))) (slide #3 #1 (map (lambda (r) (slide #3 #1 r)) (pad2d g))))))",
        1,
    ),
    // a plain map of windows of the rows of a row-major grid read by a sequential reduction
    (
        "windows_summed",
        "(lift (H W) ((array-type (array-type float W) H)) (lambda (g) \
         (join (mapGlb (lambda (ws) (reduceSeq (lambda (acc w) (+ acc (at 1 w))) 0.0f ws)) \
         (map (lambda (r) (slide #2 #2 r)) g)))))",
        1,
    ),
    // each work-item returns the windows of its rows: the view has no dual, so it is copied
    (
        "windows_returned",
        "(lift (H W) ((array-type (array-type float W) H)) (lambda (g) \
         (mapGlb (lambda (rows) (map (lambda (r) (slide #2 #1 r)) rows)) (split #2 g))))",
        1,
    ),
];

#[test]
fn slide_views_maps_of_slides_and_pads_equal_the_interpreter() {
    let device = crate::opencl::device();
    check_all(
        &PROGRAMS,
        |(name, ..)| name,
        |&(name, src, kernels)| {
            let c = lift::compile(
                src,
                &lift::Options {
                    as_written: true,
                    ..lift::Options::default()
                },
            )
            .map_err(|e| format!("{name}: {}", e.message()))?;
            let got = c.plan.as_ref().map_or(0, |p| p.kernels.len());
            if got != kernels {
                return Err(format!("{name}: {got} kernels, not {kernels}"));
            }
            let Some(device) = &device else { return Ok(()) };
            let data = format!("{{\"g\": {}}}", matrix(name.len() as u64, 6, 8));
            equals_interpreter(name, src, &data, device)
        },
    );
}

/// The cost model's first variant of jacobi written with `slide2d`, at the suite's size, built
/// for it, as `cl@views_slide__jacobi2d.snap`.
#[test]
fn slide_views_jacobi2d_kernel() {
    let c = lift::compile(
        JACOBI2D,
        &lift::Options {
            sizes: [("H".to_string(), 8192), ("W".to_string(), 8192)].into_iter().collect(),
            specialise: true,
            ..lift::Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}", e.message()));
    let cl = c.text(lift::Emit::Cl).unwrap_or_else(|e| panic!("{}", e.message()));
    let description = c.variant.as_ref().map_or("as written", |v| v.description.as_str());
    insta::with_settings!({
        snapshot_suffix => "views_slide__jacobi2d",
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => "bench/indep/jacobi2d.lisp compiled with the sizes H=8192 W=8192 built in",
    }, {
        insta::assert_snapshot!("cl", format!(";; {description}\n{cl}"));
    });
}

/// A convolution pass a chunk of four outputs a work-item (`mapGlb1 8192 × mapGlb 2048`, the
/// 2-D mapping of a row of reductions in chunks, among the cost model's first 40 at the
/// suite's size) equals the interpreter at 256².
#[test]
fn slide_views_convolution_in_chunks_equals_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    for (name, src) in [
        (
            "convolution_row",
            include_str!("../../../../bench/cgo17/convolution_row.lisp"),
        ),
        (
            "convolution_col",
            include_str!("../../../../bench/cgo17/convolution_col.lisp"),
        ),
    ] {
        let prog = ir::parse(src).expect("parses");
        let info = typeck::infer(&prog).expect("types");
        let ropts = rewrite::Options {
            sizes: [("H".to_string(), 8192), ("W".to_string(), 8192)].into_iter().collect(),
            top_k: 40,
            ..rewrite::Options::default()
        };
        let ex = rewrite::explore(&prog, &info, &ropts).expect("explores");
        let v = ex
            .variants
            .iter()
            .find(|v| v.description.contains("mapGlb1 8192 × mapGlb 2048 |"))
            .unwrap_or_else(|| panic!("{name}: no chunked variant\n{ex}"));
        let mut r = ir::rng::XorShift::new(name.len() as u64);
        let weights = eighths(&mut r, 17).join(",");
        let data = format!("{{\"img\": {}, \"weights\": [{weights}]}}", matrix(3, 256, 256));
        equals_interpreter(name, &v.source, &data, &device).unwrap_or_else(|e| panic!("{e}\n{}", v.source));
    }
}

/// A high-level stencil over a padded grid, written with definitions (`pad2d` then `slide2d`):
/// the definitions' arguments are `let`-bound views, so every variant is one kernel reading
/// the grid, equal to the interpreter.
#[test]
fn slide_views_padded_stencil_of_definitions_is_one_kernel() {
    let src = "(define (slide2d s t xss) (map transpose (slide s t (map (lambda (r) (slide s t r)) xss)))) \
         (define (pad2d xss) (transpose (map (lambda (c) (pad #1 #1 0.0f c)) (transpose (map (lambda (r) (pad-clamp #1 #1 r)) xss))))) \
         (lift (H W) ((array-type (array-type float W) H)) (lambda (g) \
         (map (lambda (nbhs) (map (lambda (nbh) (+ (at 1 (at 0 nbh)) (+ (at 0 (at 1 nbh)) (at 2 (at 2 nbh))))) nbhs)) \
         (slide2d #3 #1 (pad2d g)))))";
    let prog = ir::parse(src).expect("parses");
    let info = typeck::infer(&prog).expect("types");
    let ropts = rewrite::Options {
        sizes: [("H".to_string(), 64), ("W".to_string(), 128)].into_iter().collect(),
        ..rewrite::Options::default()
    };
    let ex = rewrite::explore(&prog, &info, &ropts).expect("explores");
    let device = crate::opencl::device();
    let data = format!("{{\"g\": {}}}", matrix(9, 64, 128));
    check_all(
        &ex.variants,
        |v| &v.description,
        |v| {
            let c = lift::compile(
                &v.source,
                &lift::Options {
                    as_written: true,
                    ..lift::Options::default()
                },
            )
            .map_err(|e| e.message())?;
            let kernels = c.plan.as_ref().map_or(0, |p| p.kernels.len());
            if kernels != 1 {
                return Err(format!("{kernels} kernels:\n{}", v.source));
            }
            match &device {
                Some(d) => equals_interpreter("padded", &v.source, &data, d),
                None => Ok(()),
            }
        },
    );
}
