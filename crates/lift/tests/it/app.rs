//! `lift::app`: a program built into a library and used from Rust. Results equal the reference
//! interpreter at the built size and at others (the generic kernels), arrays chain between calls
//! and are freed when dropped, threads share one context, and misuse is an `Err` with the
//! library's message. Needs `cc` and an OpenCL device (PoCL in CI).

use ir::interp::Value;
use lift::app::{BuildOptions, Library};
use std::path::Path;

fn interp_saxpy(alpha: f32, xs: &[f32], ys: &[f32]) -> Vec<f32> {
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/saxpy.lisp"))
        .expect("read saxpy.lisp");
    let compiled = lift::compile(&src, &lift::Options::types_only()).expect("compiles");
    let arr = |v: &[f32]| Value::Array(v.iter().map(|x| Value::Float(*x)).collect());
    let inputs = lift::data::Inputs {
        values: vec![Value::Float(alpha), arr(xs), arr(ys)],
        sizes: [("N".to_string(), xs.len() as i64)].into_iter().collect(),
    };
    let opts = lift::RunOptions {
        device: None,
        time: false,
        interp: true,
    };
    let r = lift::run_compiled(&compiled, &inputs, &opts).expect("the interpreter runs");
    match r.value {
        Value::Array(vs) => vs
            .iter()
            .map(|v| match v {
                Value::Float(x) => *x,
                other => panic!("not a float: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

#[test]
fn a_loaded_library_equals_the_interpreter_chains_and_frees() {
    let Some(device) = crate::opencl::device() else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/saxpy.lisp");
    let opts = BuildOptions {
        sizes: [("N".to_string(), 64)].into_iter().collect(),
        ..BuildOptions::default()
    };
    let lib = Library::build_file(&path, &opts).expect("builds");
    assert_eq!(lib.params().len(), 3);
    let ctx = lib.context(device.as_deref()).expect("a context");
    for n in [64usize, 37] {
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
        let y: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
        let xs = ctx.array(&x, &[n]).expect("xs");
        let ys = ctx.array(&y, &[n]).expect("ys");
        let once = ctx.run(&[1.5f32.into(), (&xs).into(), (&ys).into()]).expect("runs");
        let twice = ctx
            .run(&[1.5f32.into(), (&xs).into(), (&once).into()])
            .expect("runs chained");
        let want = interp_saxpy(1.5, &x, &y);
        assert_eq!(once.to_vec::<f32>().expect("values"), want, "n={n}");
        assert_eq!(
            twice.to_vec::<f32>().expect("values"),
            interp_saxpy(1.5, &x, &want),
            "n={n}"
        );
        let used = ctx.used();
        assert_eq!(used.ends_with("built for N=64"), n == 64, "{used}");
    }
    // Everything above was dropped: nothing left on the device.
    assert_eq!(ctx.live_arrays(), 0);
}

#[test]
fn misuse_of_a_loaded_library_is_an_error_and_threads_share_a_context() {
    let Some(device) = crate::opencl::device() else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/saxpy.lisp");
    let lib = Library::build_file(&path, &BuildOptions::default()).expect("builds");
    let ctx = lib.context(device.as_deref()).expect("a context");
    let other = lib.context(device.as_deref()).expect("a second context");
    let xs = ctx.array(&[1.0f32, 2.0], &[2]).expect("xs");
    let theirs = other.array(&[1.0f32, 2.0], &[2]).expect("theirs");
    let msg = |r: Result<lift::app::Array, lift::Error>| r.expect_err("must fail").message();
    assert_eq!(
        msg(ctx.run(&[2.0f32.into(), (&xs).into(), (&theirs).into()])),
        "argument `ys` is an array of another context"
    );
    assert_eq!(
        msg(ctx.run(&[2.0f64.into(), (&xs).into(), (&xs).into()])),
        "argument `alpha` must be a f32 scalar, not a f64 scalar"
    );
    assert_eq!(msg(ctx.run(&[2.0f32.into()])), "saxpy takes 3 arguments, 1 given");
    assert_eq!(
        msg(ctx.array(&[1.0f32, 2.0, 3.0], &[2])),
        "shape [2] has 2 elements, but the data has 3"
    );
    assert_eq!(
        msg(ctx.array(&[1i32, 2], &[2])),
        "this library has no arrays of i32 of rank 1 (see `<prog>_signature`)"
    );
    assert!(xs.to_vec::<f64>().is_err());
    let short = ctx.array(&[1.0f32], &[1]).expect("short");
    assert_eq!(
        msg(ctx.run(&[2.0f32.into(), (&xs).into(), (&short).into()])),
        "argument `ys` has shape [1], but the sizes the arguments give (N=2) make it [2]"
    );
    assert!(lib.context(Some("99:99")).is_err());
    // Four threads on one context, each chaining its own calls.
    let results: Vec<Vec<f32>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|k| {
                let ctx = ctx.clone();
                s.spawn(move || {
                    let x = vec![k as f32; 100];
                    let xs = ctx.array(&x, &[100]).expect("xs");
                    let mut acc = ctx.array(&vec![0.0f32; 100], &[100]).expect("acc");
                    for _ in 0..25 {
                        acc = ctx.run(&[1.0f32.into(), (&xs).into(), (&acc).into()]).expect("runs");
                    }
                    acc.to_vec::<f32>().expect("values")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("the thread")).collect()
    });
    for (k, r) in results.iter().enumerate() {
        assert!(r.iter().all(|v| *v == 25.0 * k as f32), "thread {k}: {r:?}");
    }
    drop((xs, theirs, short));
    assert_eq!(ctx.live_arrays(), 0);
}

#[test]
fn a_library_picks_built_generic_or_as_written_kernels_by_the_arguments_sizes() {
    let Some(device) = crate::opencl::device() else { return };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/hl_matvec.lisp");
    let opts = BuildOptions {
        sizes: [("M".to_string(), 4), ("N".to_string(), 256)].into_iter().collect(),
        ..BuildOptions::default()
    };
    let lib = Library::build_file(&path, &opts).expect("builds");
    let ctx = lib.context(device.as_deref()).expect("a context");
    // The cost model's generic variant splits rows by 128 (a condition on N): 512 columns run
    // it, 5 the program as written; 4×256 the kernels built for it.
    for (m, n, used) in [
        (4usize, 256usize, "built for M=4, N=256"),
        (2, 512, "generic kernels (sizes as arguments)"),
        (3, 5, "the program as written, generic kernels (sizes as arguments)"),
    ] {
        let mat: Vec<f32> = (0..m * n).map(|i| (i % 7) as f32 - 3.0).collect();
        let v: Vec<f32> = (0..n).map(|j| (j % 3) as f32 * 0.5).collect();
        let a = ctx.array(&mat, &[m, n]).expect("mat");
        let b = ctx.array(&v, &[n]).expect("v");
        let r = ctx.run(&[(&a).into(), (&b).into()]).expect("runs");
        let want: Vec<f32> = (0..m).map(|i| (0..n).map(|j| mat[i * n + j] * v[j]).sum()).collect();
        let got = r.to_vec::<f32>().expect("values");
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| (g - w).abs() <= 1e-4 * (1.0 + w.abs())),
            "{m}x{n}: {got:?} != {want:?}"
        );
        assert!(ctx.used().ends_with(used), "{m}x{n}: {}", ctx.used());
    }
    assert!(ctx.used().starts_with("the program as written"));
}

/// The interpreter's result of `src` on the JSON `data`, as JSON.
fn interp_json(src: &str, data: &str) -> serde_json::Value {
    use lift::data::DataSource;
    let opts = lift::RunOptions {
        device: None,
        time: false,
        interp: true,
    };
    let r = lift::run_sources(src, &[DataSource::Json(data.into(), "<data>".into())], &[], &opts)
        .expect("the interpreter runs");
    crate::parse_json(&r.json, "the interpreter's result")
}

/// A program of element type `t`: the squares of `xs` plus `k`.
fn square_plus(t: &str) -> String {
    format!("(lift (N) ((array-type {t} N) {t}) (lambda (xs k) (map (lambda (x) (+ (* x x) k)) xs)))")
}

/// Builds `square_plus` of element type `t` into a library, runs it on `xs` and `k`, then
/// again on its own result (a second context of another library sharing the first's device
/// context), and compares both with the interpreter.
fn check_type<T>(t: &str, xs: &[T], k: T, device: Option<&str>)
where
    T: lift::app::Element + Into<serde_json::Value>,
    for<'a> lift::app::Arg<'a>: From<T>,
{
    let src = square_plus(t);
    let first = Library::build(&format!("first_{t}"), &src, &BuildOptions::default()).expect("builds");
    let second = Library::build(&format!("second_{t}"), &src, &BuildOptions::default()).expect("builds");
    let a = first.context(device).expect("a context");
    let b = second.context_with(&a).expect("a shared context");
    let arr = a.array(xs, &[xs.len()]).expect("an array");
    let moved = a.bytes_moved();
    let once = a.run(&[(&arr).into(), lift::app::Arg::from(k)]).expect("runs");
    let twice = b
        .run(&[(&once).into(), lift::app::Arg::from(k)])
        .expect("runs on the other library's result");
    assert_eq!(a.bytes_moved(), moved, "{t}: the chained runs copied data");
    assert_eq!(b.bytes_moved(), moved, "{t}: the shared context counts the same copies");
    let once_v = once.to_vec::<T>().expect("values");
    let json = |v: &[T]| serde_json::Value::Array(v.iter().map(|x| (*x).into()).collect());
    let kj: serde_json::Value = k.into();
    let want = interp_json(&src, &serde_json::json!({ "xs": json(xs), "k": kj }).to_string());
    let got = json(&once_v);
    assert!(crate::json_close(&want, &got), "{t}: interpreter {want}, library {got}");
    let want2 = interp_json(&src, &serde_json::json!({ "xs": want, "k": kj }).to_string());
    let got2 = json(&twice.to_vec::<T>().expect("values"));
    assert!(
        crate::json_close(&want2, &got2),
        "{t}: interpreter {want2}, library {got2}"
    );
    // An array of a context that does not share the device context is refused.
    let apart = second.context(device).expect("another context");
    let theirs = apart.array(xs, &[xs.len()]).expect("an array");
    let e = b
        .run(&[(&theirs).into(), lift::app::Arg::from(k)])
        .expect_err("another context's array");
    assert_eq!(e.message(), "argument `xs` is an array of another context");
    drop((arr, once, twice, theirs));
    assert_eq!(a.live_arrays(), 0);
    assert_eq!(b.live_arrays(), 0);
}

#[test]
fn libraries_of_every_element_type_share_a_context_and_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let device = device.as_deref();
    check_type::<i32>("int", &[3, -7, 46341, i32::MIN], -5, device);
    check_type::<u32>("uint", &[3, 7, 65536, u32::MAX], 9, device);
    check_type::<i64>("long", &[3, -7, 3_037_000_500, i64::MIN + 1], -5, device);
    check_type::<u64>("ulong", &[3, 7, 1 << 33, u64::MAX], 9, device);
    check_type::<f64>("double", &[0.5, -1.25, 1e70, 3.0], 0.125, device);
    check_type::<f32>("float", &[0.5, -1.25, 3e8, 3.0], 0.125, device);
}
