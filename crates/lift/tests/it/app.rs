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

/// The interpreter's result of the example `name` on `xs`.
fn interp_example(name: &str, xs: &[f32]) -> serde_json::Value {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/{name}.lisp")))
            .expect("read the example");
    interp_json(&src, &serde_json::json!({ "xs": xs }).to_string())
}

#[test]
fn a_filter_result_has_the_length_its_run_counted_and_chains_into_another_program() {
    let Some(device) = crate::opencl::device() else { return };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    // filterGlb's single pass, its result the program's; filterSeq's, its result mapped.
    let glb = Library::build_file(&examples.join("filter_glb.lisp"), &BuildOptions::default()).expect("builds");
    let seq = Library::build_file(&examples.join("filter_seq.lisp"), &BuildOptions::default()).expect("builds");
    let a = glb.context(device.as_deref()).expect("a context");
    let b = seq.context_with(&a).expect("a shared context");
    // Nothing kept: an empty result.
    let positive = a.array(&[1.0f32, 2.0, 3.0], &[3]).expect("xs");
    let none = a.run(&[(&positive).into()]).expect("filter_glb runs");
    assert_eq!(none.shape(), [0]);
    assert!(none.to_vec::<f32>().expect("values").is_empty());
    drop((positive, none));
    for n in [1000usize, 37] {
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 23) as f32 - 11.0) * 0.5).collect();
        let xs = a.array(&x, &[n]).expect("xs");
        let kept = a.run(&[(&xs).into()]).expect("filter_glb runs");
        let want = interp_example("filter_glb", &x);
        let got: Vec<f32> = kept.to_vec().expect("values");
        assert_eq!(kept.shape(), [want.as_array().map_or(0, Vec::len)], "n={n}");
        let got_json = serde_json::Value::Array(got.iter().map(|v| (*v).into()).collect());
        assert!(
            crate::json_close(&want, &got_json),
            "n={n}: interpreter {want}, library {got_json}"
        );
        // The filter's result is the next program's input, on the device.
        let moved = a.bytes_moved();
        let squares = b.run(&[(&kept).into()]).expect("filter_seq runs on it");
        // Only the two counts (4 bytes each) and the zeroed counters cross.
        assert!(a.bytes_moved() - moved < 64, "n={n}: {} bytes", a.bytes_moved() - moved);
        let want2 = interp_example("filter_seq", &got);
        let got2 = serde_json::Value::Array(
            squares
                .to_vec::<f32>()
                .expect("values")
                .iter()
                .map(|v| (*v).into())
                .collect(),
        );
        assert!(
            crate::json_close(&want2, &got2),
            "n={n}: interpreter {want2}, library {got2}"
        );
    }
    assert_eq!(a.live_arrays(), 0);
    // Rows of filter results are not a library's result yet: a clear refusal.
    let e = Library::build_file(&examples.join("filter_seq_rows.lisp"), &BuildOptions::default()).expect_err("refused");
    assert!(
        e.message().contains("not supported yet in `lift build`"),
        "{}",
        e.message()
    );
}

/// The interpreter's result of `src` on `xs`, with `sizes` the inputs do not give.
fn interp_host(src: &str, xs: &[f32], sizes: &[(&str, i64)]) -> serde_json::Value {
    use lift::data::DataSource;
    let opts = lift::RunOptions {
        device: None,
        time: false,
        interp: true,
    };
    let data = [DataSource::Json(
        serde_json::json!({ "xs": xs }).to_string(),
        "<data>".into(),
    )];
    let sizes: Vec<(String, i64)> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let r = lift::run_sources(src, &data, &sizes, &opts).expect("the interpreter runs");
    crate::parse_json(&r.json, "the interpreter's result")
}

/// A host `if` on a boolean computed on the device.
const SIGN: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (> x 0.0f))) true all)) (split N xs)))
        (mapGlb (lambda (x) (* x 2.0f)) xs)
        (mapGlb (lambda (x) (- 0.0f x)) xs))))";

/// Maps fused into a host loop's first and last steps by `lift run`.
const FUSED: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (let s0 (mapGlb (lambda (x) (* x 3.0f)) xs)
      (let r (iterate K (lambda (s) (mapGlb (lambda (v) (+ (* v 0.5f) 1.0f)) s)) s0)
        (mapGlb (lambda (v) (- v 100.0f)) r)))))";

/// A host `if` as a loop's body.
const BRANCHY: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (iterate K
      (lambda (s)
        (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (< x 10.0f))) true all)) (split N s)))
          (mapGlb (lambda (x) (* x 2.0f)) s)
          (mapGlb (lambda (x) (- x 7.0f)) s)))
      xs)))";

/// A loop inside a loop whose body reads the outer state after the inner loop.
const NESTED: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (iterate #3
      (lambda (s)
        (let t (iterate K (lambda (u) (mapGlb (lambda (x) (+ x 1.0f)) u)) s)
          (mapGlb (lambda (p) (* (get #0 p) (get #1 p))) (zip t s))))
      xs)))";

/// Two host `if`s in a row: six units, more than a library of kernels has variants, so its
/// context's layout differs from the plain libraries' beyond the fields they share.
const TWO_IFS: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (let y (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (> x 0.0f))) true all)) (split N xs)))
               (mapGlb (lambda (x) (* x 2.0f)) xs)
               (mapGlb (lambda (x) (- 0.0f x)) xs))
      (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (< x 5.0f))) true all)) (split N y)))
          (mapGlb (lambda (x) (+ x 1.0f)) y)
          (mapGlb (lambda (x) (* x 0.5f)) y)))))";

fn run_f32(ctx: &lift::app::Context, x: &[f32]) -> Vec<f32> {
    let xs = ctx.array(x, &[x.len()]).expect("xs");
    let r = ctx.run(&[(&xs).into()]).expect("runs");
    r.to_vec().expect("values")
}

fn close(want: &serde_json::Value, got: &[f32], what: &str) {
    let got = serde_json::Value::Array(got.iter().map(|v| (*v).into()).collect());
    assert!(
        crate::json_close(want, &got),
        "{what}: interpreter {want}, library {got}"
    );
}

#[test]
fn host_loops_and_ifs_in_a_library_equal_the_interpreter() {
    let Some(device) = crate::opencl::device() else { return };
    let device = device.as_deref();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    // `iterate-until` with its condition on the device, sizes from the arguments.
    let jacobi_src = std::fs::read_to_string(examples.join("host_jacobi.lisp")).expect("read host_jacobi.lisp");
    let jacobi = Library::build("host_jacobi", &jacobi_src, &BuildOptions::default()).expect("builds");
    assert!(
        jacobi.compiled_as().starts_with("a host program of 2 parts"),
        "{}",
        jacobi.compiled_as()
    );
    let sign = Library::build("sign", SIGN, &BuildOptions::default()).expect("builds");
    let a = jacobi.context(device).expect("a context");
    let b = sign.context_with(&a).expect("a shared context");
    for n in [64usize, 37] {
        let x: Vec<f32> = (0..n).map(|i| ((i * 37 % 11) as f32) - 2.0).collect();
        close(
            &interp_host(&jacobi_src, &x, &[]),
            &run_f32(&a, &x),
            &format!("jacobi n={n}"),
        );
        // The host `if` both ways, and on the other program's result without a copy.
        let pos: Vec<f32> = x.iter().map(|v| v.abs() + 0.5).collect();
        close(&interp_host(SIGN, &x, &[]), &run_f32(&b, &x), "sign, some negative");
        close(&interp_host(SIGN, &pos, &[]), &run_f32(&b, &pos), "sign, all positive");
        let xs = a.array(&x, &[n]).expect("xs");
        let smooth = a.run(&[(&xs).into()]).expect("jacobi runs");
        let moved = a.bytes_moved();
        let signed = b.run(&[(&smooth).into()]).expect("sign runs on it");
        // Only the `if`'s condition (4 bytes) crosses.
        assert_eq!(a.bytes_moved() - moved, 4, "n={n}");
        let want = interp_host(SIGN, &smooth.to_vec::<f32>().expect("values"), &[]);
        close(&want, &signed.to_vec::<f32>().expect("values"), "sign of jacobi");
    }
    // A library of six units shares the context of one of two, and takes its result.
    let two_ifs = Library::build("two_ifs", TWO_IFS, &BuildOptions::default()).expect("builds");
    assert!(
        two_ifs.compiled_as().starts_with("a host program of 6 parts"),
        "{}",
        two_ifs.compiled_as()
    );
    let six = two_ifs.context_with(&a).expect("a shared context");
    let x: Vec<f32> = (0..50).map(|i| ((i * 13 % 7) as f32) * 0.5 - 1.0).collect();
    let xs = a.array(&x, &[50]).expect("xs");
    let smooth = a.run(&[(&xs).into()]).expect("jacobi runs");
    let r = six.run(&[(&smooth).into()]).expect("two_ifs runs on it");
    let want = interp_host(TWO_IFS, &smooth.to_vec::<f32>().expect("values"), &[]);
    close(&want, &r.to_vec::<f32>().expect("values"), "two ifs of jacobi");
    let pos: Vec<f32> = x.iter().map(|v| v.abs() * 0.1 + 0.5).collect();
    close(
        &interp_host(TWO_IFS, &pos, &[]),
        &run_f32(&six, &pos),
        "two ifs, all positive",
    );
    drop((xs, smooth, r));
    // Sizes that are no argument's length (the count K) are built in.
    let x = [1.0f32, 2.0, 3.0, 4.0, -1.5, 0.25, 8.0, 2.5];
    for (src, name, sizes) in [
        (FUSED, "fused", [("N", 8), ("K", 3)]),
        (FUSED, "fused_once", [("N", 8), ("K", 1)]),
        (BRANCHY, "branchy", [("N", 8), ("K", 4)]),
        (NESTED, "nested", [("N", 8), ("K", 2)]),
    ] {
        let opts = BuildOptions {
            sizes: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..BuildOptions::default()
        };
        let lib = Library::build(name, src, &opts).expect("builds");
        let ctx = lib.context(device).expect("a context");
        close(&interp_host(src, &x, &sizes), &run_f32(&ctx, &x), name);
        let short = ctx.array(&x[..4], &[4]).expect("short");
        let e = ctx.run(&[(&short).into()]).expect_err("another size");
        assert!(
            e.message().contains("but the library was built for [8]"),
            "{}",
            e.message()
        );
    }
    // A filter's result as a host loop's state is refused, clearly.
    let shrink = "(lift (N K) ((array-type float N))
      (lambda (xs) (iterate K (lambda (s) (filter (lambda (x) (> x 0.5f)) (map (lambda (x) (* x 0.75f)) s))) xs)))";
    let opts = BuildOptions {
        sizes: [("N".to_string(), 8), ("K".to_string(), 2)].into_iter().collect(),
        ..BuildOptions::default()
    };
    let e = Library::build("shrink", shrink, &opts).expect_err("refused");
    assert!(
        e.message().contains("not supported yet in `lift build`"),
        "{}",
        e.message()
    );
}

/// The interpreter's result of `src` on the JSON `data`, flattened to numbers (tuples and
/// vectors are the last dimension of a library's arrays).
fn flat(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match v {
        serde_json::Value::Array(items) => items.iter().for_each(|i| flat(i, out)),
        other => out.push(other.clone()),
    }
}

#[test]
fn arrays_of_tuples_and_vectors_are_arrays_of_their_scalars_with_one_more_dimension() {
    let Some(device) = crate::opencl::device() else { return };
    let device = device.as_deref();
    // A parameter of pairs (the suite's nn).
    let nn_src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cgo17/nn.lisp"))
        .expect("read nn.lisp");
    let nn = Library::build("nn", &nn_src, &BuildOptions::default()).expect("builds");
    assert_eq!((nn.params()[0].elem, nn.params()[0].rank), (lift::app::Elem::F32, 2));
    let ctx = nn.context(device).expect("a context");
    let locs: Vec<[f32; 2]> = (0..40).map(|i| [i as f32 * 0.5 - 7.0, (i * 7 % 11) as f32]).collect();
    let flat_locs: Vec<f32> = locs.iter().flatten().copied().collect();
    let arr = ctx.array(&flat_locs, &[40, 2]).expect("locs");
    let r = ctx
        .run(&[(&arr).into(), 1.0f32.into(), 2.0f32.into()])
        .expect("nn runs");
    let want = interp_json(
        &nn_src,
        &serde_json::json!({ "locs": locs, "lat": 1.0, "lng": 2.0 }).to_string(),
    );
    close(&want, &r.to_vec::<f32>().expect("values"), "nn");
    // A result of pairs and a parameter of float4.
    let src = "(lift (N) ((array-type (vector-type float 4) N))
      (lambda (vs) (mapGlb (lambda (v) (tuple (vget #0 v) (+ (vget #1 v) (vget #3 v)))) vs)))";
    let lib = Library::build("quads", src, &BuildOptions::default()).expect("builds");
    assert_eq!((lib.params()[0].rank, lib.result().rank), (2, 2));
    let ctx = lib.context(device).expect("a context");
    let vs: Vec<f32> = (0..48).map(|i| i as f32 * 0.25).collect();
    let arr = ctx.array(&vs, &[12, 4]).expect("vs");
    let r = ctx.run(&[(&arr).into()]).expect("runs");
    assert_eq!(r.shape(), [12, 2]);
    let rows: Vec<Vec<f32>> = vs.chunks(4).map(<[f32]>::to_vec).collect();
    let want = interp_json(src, &serde_json::json!({ "vs": rows }).to_string());
    let mut want_flat = vec![];
    flat(&want, &mut want_flat);
    close(
        &serde_json::Value::Array(want_flat),
        &r.to_vec::<f32>().expect("values"),
        "pairs of float4",
    );
}
