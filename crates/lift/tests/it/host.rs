//! Host sections (LANGUAGE.md "Host sections"): host loops and host `if`s run on the host over
//! device buffers, and equal the reference interpreter.

use ir::interp::Value;

fn floats(xs: &[f32]) -> Value {
    Value::Array(xs.iter().map(|x| Value::Float(*x)).collect())
}

/// Compiles `src` at `sizes` and runs it on `values`, on the interpreter or on OpenCL.
fn run(
    src: &str,
    values: Vec<Value>,
    sizes: &[(&str, i64)],
    device: Option<&Option<String>>,
) -> Result<String, String> {
    let sizes: std::collections::BTreeMap<String, i64> = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let compiled = lift::compile(
        src,
        &lift::Options {
            sizes: sizes.clone(),
            ..lift::Options::default()
        },
    )
    .map_err(|e| e.render("host.lisp", src))?;
    let inputs = lift::data::Inputs { values, sizes };
    let opts = lift::RunOptions {
        device: device.cloned().flatten(),
        time: device.is_some(),
        interp: device.is_none(),
    };
    lift::run_compiled(&compiled, &inputs, &opts)
        .map(|r| r.json)
        .map_err(|e| e.render("host.lisp", src))
}

const HALVE: &str = "(lift (N K) ((array-type float N))
  (lambda (xs) (iterate K (lambda (s) (mapGlb (lambda (x) (+ (* x 0.5f) 1.0f)) s)) xs)))";

#[test]
fn iterate_with_a_size_variable_is_one_kernel_launched_k_times() {
    let c = lift::compile(HALVE, &lift::Options::default()).expect("compiles");
    assert!(c.host.is_some() && c.plan.is_none(), "a host program");
    let cl = c.text(lift::Emit::Cl).expect("source");
    assert_eq!(
        cl.matches("kernel void").count(),
        1,
        "one kernel, generated once:\n{cl}"
    );
    let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
    let want = ["[1.96875,2.0,2.03125,2.0625]", "[1.0,2.0,3.0,4.0]", "[1.5,2.0,2.5,3.0]"];
    for (k, want) in [5, 0, 1].into_iter().zip(want) {
        let sizes = [("N", 4), ("K", k)];
        assert_eq!(
            run(HALVE, xs(), &sizes, None).as_deref(),
            Ok(want),
            "interpreter, K={k}"
        );
        let Some(device) = crate::opencl::device() else { return };
        assert_eq!(
            run(HALVE, xs(), &sizes, Some(&device)).as_deref(),
            Ok(want),
            "OpenCL, K={k}"
        );
    }
}

#[test]
fn a_host_loop_must_keep_the_state_type() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (iterate #2 (lambda (s) (mapGlb (lambda (x) x) (join (split #2 (slide #2 #2 s))))) xs)))";
    let err = lift::compile(src, &lift::Options::default()).expect_err("refused");
    assert!(
        err.message().contains("must keep the state's type"),
        "{}",
        err.message()
    );
}

/// Inside a kernel `iterate-until` is no host section but a loop of one work-item
/// (LANGUAGE.md, "Loops inside a work-item"): each element halves its own one-element state
/// until it is below 1, after its own number of steps.
#[test]
fn iterate_until_inside_a_kernel_is_a_loop_of_one_work_item() {
    let src = "(lift (N) ((array-type float N))
      (lambda (xs) (mapGlb (lambda (x) (at 0 (iterate-until #4 (lambda (p q) (< (at 0 q) 1.0f)) (lambda (s) (mapSeq (lambda (y) (* y 0.5f)) s)) (generate #1 (lambda (i) x))))) xs)))";
    let compiled = lift::compile(src, &lift::Options::default()).expect("compiles");
    assert!(compiled.host.is_none(), "no host section");
    // 0.5 stops after one step, 3 after two, 100 at the fourth (its most)
    let want = "[0.25,0.75,6.25]";
    let v = || vec![floats(&[0.5, 3.0, 100.0])];
    assert_eq!(run(src, v(), &[("N", 3)], None).as_deref(), Ok(want), "interpreter");
    let Some(device) = crate::opencl::device() else { return };
    assert_eq!(run(src, v(), &[("N", 3)], Some(&device)).as_deref(), Ok(want), "OpenCL");
}

const SIGN: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (> x 0.0f))) true all)) (split N xs)))
        (mapGlb (lambda (x) (* x 2.0f)) xs)
        (mapGlb (lambda (x) (- 0.0f x)) xs))))";

#[test]
fn a_host_if_on_a_device_boolean_chooses_the_kernels_that_run() {
    let cases = [(vec![1.0, 2.0], "[2.0,4.0]"), (vec![1.0, -2.0], "[-1.0,2.0]")];
    for (xs, want) in cases {
        let v = || vec![floats(&xs)];
        let sizes = [("N", 2)];
        assert_eq!(run(SIGN, v(), &sizes, None).as_deref(), Ok(want), "interpreter");
        let Some(device) = crate::opencl::device() else { return };
        assert_eq!(run(SIGN, v(), &sizes, Some(&device)).as_deref(), Ok(want), "OpenCL");
    }
}

/// `lift run --time` of an `iterate-until` names the steps it took (k-means converges in 3).
#[test]
fn iterate_until_reports_its_steps() {
    let Some(device) = crate::opencl::device() else { return };
    let dir = crate::examples_dir();
    let src = std::fs::read_to_string(dir.join("host_kmeans.lisp")).expect("example");
    let data = vec![dir.join("host_kmeans.json").display().to_string()];
    let opts = lift::RunOptions {
        device,
        time: true,
        interp: false,
    };
    let r = lift::run_files(&src, &data, &[], &opts).unwrap_or_else(|e| panic!("{}", e.render("k", &src)));
    let timing = r.timing.expect("timing");
    assert!(timing.contains("(iterate-until): 3 steps"), "{timing}");
}

const FUSED: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (let s0 (mapGlb (lambda (x) (* x 3.0f)) xs)
      (let r (iterate K (lambda (s) (mapGlb (lambda (v) (+ (* v 0.5f) 1.0f)) s)) s0)
        (mapGlb (lambda (v) (- v 100.0f)) r)))))";

/// The maps before and after the loop run inside its first and last steps: K launches in all,
/// and the result is the interpreter's for every K (one step: both maps fused into it).
#[test]
fn maps_around_a_host_loop_fuse_into_its_first_and_last_steps() {
    let c = lift::compile(FUSED, &lift::Options::default()).expect("compiles");
    let plan = c.text(lift::Emit::Plan).expect("plan");
    assert!(
        plan.contains("first step: unit") && plan.contains("last step: unit"),
        "{plan}"
    );
    let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
    for k in [0, 1, 2, 5] {
        let sizes = [("N", 4), ("K", k)];
        let want = run(FUSED, xs(), &sizes, None).expect("interpreter");
        let Some(device) = crate::opencl::device() else { return };
        let compiled = lift::compile(FUSED, &lift::Options::default()).expect("compiles");
        let inputs = lift::data::Inputs {
            values: xs(),
            sizes: sizes.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        };
        let opts = lift::RunOptions {
            device: device.clone(),
            time: true,
            interp: false,
        };
        let got = lift::run_compiled(&compiled, &inputs, &opts).expect("OpenCL");
        assert!(
            crate::json_close(&crate::parse_json(&want, "interp"), &crate::parse_json(&got.json, "cl")),
            "K={k}: {want} vs {}",
            got.json
        );
        let timing = got.timing.expect("timing");
        let launches: i64 = timing
            .lines()
            .filter_map(|l| {
                l.split(": ")
                    .nth(1)?
                    .strip_suffix(" ms")?
                    .split(" launches")
                    .next()?
                    .parse::<i64>()
                    .ok()
            })
            .sum();
        let expected = if k == 0 { 2 } else { k };
        assert_eq!(launches, expected, "K={k}:\n{timing}");
    }
}

const STAIRS: &str = "(lift (N M) ((array-type float N) (array-type float M))
  (lambda (xs ys)
    (iterate-until #10
      (lambda (prev next)
        (join (mapGlb (lambda (all) (reduceSeq (lambda (a pq) (and a (>= (get #1 pq) 4.0f))) true all))
                      (split N (zip prev next)))))
      (lambda (s) (mapGlb (lambda (x) (+ x (at (to-int x) ys))) s))
      xs)))";

/// The step enqueued ahead of the condition that ends the loop reads `ys[4]`, which the
/// interpreter never does: that is no error. Without the condition, the fifth step really
/// reads it, and both report it.
#[test]
fn only_steps_the_program_runs_can_fail() {
    let values = || vec![floats(&[0.0, 0.0]), floats(&[1.0, 1.0, 1.0, 1.0])];
    let sizes = [("N", 2), ("M", 4)];
    assert_eq!(
        run(STAIRS, values(), &sizes, None).as_deref(),
        Ok("[4.0,4.0]"),
        "interpreter"
    );
    let never = STAIRS.replace("(>= (get #1 pq) 4.0f)", "false");
    let err = run(&never, values(), &sizes, None).expect_err("interpreter");
    assert!(err.contains("out of range"), "{err}");
    let Some(device) = crate::opencl::device() else { return };
    assert_eq!(
        run(STAIRS, values(), &sizes, Some(&device)).as_deref(),
        Ok("[4.0,4.0]"),
        "OpenCL"
    );
    let err = run(&never, values(), &sizes, Some(&device)).expect_err("OpenCL");
    assert!(err.contains("index out of range in `at`"), "{err}");
}

/// Sections nested in other expressions run first; the expression reads their values.
#[test]
fn sections_nested_in_expressions_run_before_the_kernels_that_read_them() {
    let until = "(lift (N) ((array-type float N))
      (lambda (xs)
        (join (mapGlb (lambda (x) (mapSeq (lambda (y) (* y 2.0f)) (generate #1 (lambda (i) x))))
          (iterate-until #20
            (lambda (p q) (join (mapGlb (lambda (all) (reduceSeq (lambda (a pq) (and a (> (get #1 pq) 10.0f))) true all)) (split N (zip p q)))))
            (lambda (s) (mapGlb (lambda (x) (+ x 1.0f)) s))
            xs)))))";
    let branch = "(lift (N) ((array-type float N))
      (lambda (xs)
        (mapGlb (lambda (x) (* x 2.0f))
          (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (> x 0.0f))) true all)) (split N xs)))
            (mapGlb (lambda (x) (+ x 1.0f)) xs)
            xs))))";
    let cases = [
        (until, vec![1.0, 2.0, 3.0, 4.0], "[22.0,24.0,26.0,28.0]"),
        (branch, vec![1.0, 2.0, 3.0, 4.0], "[4.0,6.0,8.0,10.0]"),
        (branch, vec![1.0, -2.0, 3.0, 4.0], "[2.0,-4.0,6.0,8.0]"),
    ];
    for (src, xs, want) in cases {
        let sizes = [("N", 4)];
        assert_eq!(
            run(src, vec![floats(&xs)], &sizes, None).as_deref(),
            Ok(want),
            "interpreter"
        );
        let Some(device) = crate::opencl::device() else { return };
        assert_eq!(
            run(src, vec![floats(&xs)], &sizes, Some(&device)).as_deref(),
            Ok(want),
            "OpenCL"
        );
    }
}

/// A host `if` as a loop's body, and a loop inside a loop whose body reads the outer state
/// after the inner loop (the inner loop's buffers never hold the outer state).
#[test]
fn sections_nest_in_loop_bodies() {
    let branchy = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K
          (lambda (s)
            (if (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (< x 10.0f))) true all)) (split N s)))
              (mapGlb (lambda (x) (* x 2.0f)) s)
              (mapGlb (lambda (x) (- x 7.0f)) s)))
          xs)))";
    let nested = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate #3
          (lambda (s)
            (let t (iterate K (lambda (u) (mapGlb (lambda (x) (+ x 1.0f)) u)) s)
              (mapGlb (lambda (p) (* (get #0 p) (get #1 p))) (zip t s))))
          xs)))";
    // [1,2,3,4]: doubled twice, then 7 taken away (16 is not below 10), then doubled again;
    // and three times x -> (x + 4) * x.
    let cases = [
        (branchy, "[-6.0,2.0,10.0,18.0]"),
        (nested, "[2205.0,37632.0,277725.0,1331712.0]"),
    ];
    for (src, want) in cases {
        let sizes = [("N", 4), ("K", 4)];
        let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
        assert_eq!(run(src, xs(), &sizes, None).as_deref(), Ok(want), "interpreter");
        let Some(device) = crate::opencl::device() else { return };
        assert_eq!(run(src, xs(), &sizes, Some(&device)).as_deref(), Ok(want), "OpenCL");
    }
}

/// `lift tune` of a host program is a clean "not supported yet", not an internal error (it
/// said "internal: no kernels" when host sections first landed).
#[test]
fn tuning_a_host_program_is_refused_cleanly() {
    let err = lift::tune::tune_with(
        HALVE,
        &["N=8".into(), "K=3".into()],
        &[],
        &lift::tune::TuneOptions::default(),
    )
    .expect_err("refused");
    let msg = err.message();
    assert!(msg.contains("not supported yet") && !msg.contains("internal"), "{msg}");
}

/// `lift bench` of a host program times the whole program: its wall time, each loop's steps
/// and the kernels' device times, in all and per step, after checking it against the
/// interpreter at small sizes (it was refused as not supported).
#[test]
fn bench_reports_a_host_programs_steps_and_times() {
    let Some(device) = crate::opencl::device() else { return };
    let opts = |check: &str| lift::bench::BenchOptions {
        device: device.clone(),
        repeats: 3,
        check: false,
        check_sizes: vec![check.to_string()],
        as_written: false,
        devices: None,
        precision: lift::Precision::F32,
    };
    let src = std::fs::read_to_string(crate::examples_dir().join("host_jacobi.lisp")).expect("the example");
    let r = lift::bench::bench(&src, &["N=2048".into()], &opts("N=64")).unwrap_or_else(|e| panic!("{}", e.message()));
    let h = r.host.as_ref().expect("a host program's report");
    assert_eq!(h.walls_ms.len(), 3);
    let [(kind, steps, Some(per_step))] = h.loops[..] else {
        panic!("one loop with its per-step time: {:?}", h.loops)
    };
    assert_eq!(kind, "iterate-until");
    assert!((1..=500).contains(&steps), "{steps}");
    assert!(per_step > 0.0 && r.total_ms >= per_step && h.wall_ms > 0.0, "{r:?}");
    assert!(r.check.starts_with("equals the interpreter at N=64"), "{}", r.check);
    let text = r.text();
    assert!(
        text.contains("steps, kernels per step (median)") && text.contains("total time (host wall"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&r.json("host_jacobi.lisp")).expect("JSON");
    assert_eq!(json["host"]["loops"][0]["steps"], steps);

    // A loop of a size-variable count takes exactly that many steps.
    let mut o = opts("N=8");
    o.check_sizes.push("K=3".into());
    let r =
        lift::bench::bench(HALVE, &["N=4096".into(), "K=50".into()], &o).unwrap_or_else(|e| panic!("{}", e.message()));
    let h = r.host.as_ref().expect("a host program's report");
    assert!(matches!(h.loops[..], [("iterate", 50, Some(_))]), "{:?}", h.loops);
    assert!(r.check.starts_with("equals the interpreter at K=3 N=8"), "{}", r.check);
}

/// Both back ends on one program: the interpreter's JSON, and OpenCL's where a device exists.
fn both(src: &str, values: impl Fn() -> Vec<Value>, sizes: &[(&str, i64)]) -> String {
    let want = run(src, values(), sizes, None).unwrap_or_else(|e| panic!("interpreter: {e}"));
    if let Some(device) = crate::opencl::device() {
        let got = run(src, values(), sizes, Some(&device)).unwrap_or_else(|e| panic!("OpenCL: {e}"));
        assert_eq!(got, want, "OpenCL against the interpreter at {sizes:?}");
    }
    want
}

/// `n` floats in [0, 4), spread so that a filter keeps some of every tile.
fn spread(n: usize) -> Value {
    floats(&(0..n).map(|i| ((i * 37) % 101) as f32 / 25.0).collect::<Vec<_>>())
}

const SHRINK: &str = "(lift (N K) ((array-type float N))
  (lambda (xs)
    (iterate K (lambda (s) (filter (lambda (x) (> x 0.5f)) (map (lambda (x) (* x 0.75f)) s))) xs)))";

/// `iterate K` of filter ∘ map: the state is `{∃X. [float]X}` from the first step on, its
/// length on the device, read back once with the result. It was refused as not supported.
#[test]
fn a_filter_in_a_host_loop_makes_its_state_a_filter_result() {
    let xs = || vec![floats(&[0.4, 1.0, 2.0, 0.6, 4.0, 0.9])];
    let cases = [
        (0, "[0.4,1.0,2.0,0.6,4.0,0.9]"),
        (1, "[0.75,1.5,3.0,0.67499995]"),
        (2, "[0.5625,1.125,2.25,0.50624996]"),
        (5, "[0.94921875]"),
        (7, "[0.53393555]"),
        (8, "[]"),
    ];
    for (k, want) in cases {
        assert_eq!(both(SHRINK, xs, &[("N", 6), ("K", k)]), want, "K={k}");
    }
    // Several filter tiles, and the steps that keep nothing or everything.
    for (src, n, k) in [
        (SHRINK.to_string(), 5000, 3),
        (SHRINK.replace("(> x 0.5f)", "(> x 100.0f)"), 5000, 3),
        (SHRINK.replace("(> x 0.5f)", "(>= x 0.0f)"), 5000, 4),
    ] {
        let got = both(&src, || vec![spread(n)], &[("N", n as i64), ("K", k)]);
        let kept = crate::parse_json(&got, "result").as_array().map(Vec::len);
        assert!(kept.is_some(), "{got}");
    }
    let plan = lift::compile(SHRINK, &lift::Options::default())
        .expect("compiles")
        .text(lift::Emit::Plan)
        .expect("plan");
    insta::assert_snapshot!("host_exist_plan_iterate", plan);
}

const SETTLE: &str = "(lift (N) ((array-type float N))
  (lambda (xs)
    (iterate-until #50
      (lambda (prev next)
        (= (at 0 (reduce + 0 (map (lambda (x) 1) prev))) (at 0 (reduce + 0 (map (lambda (x) 1) next)))))
      (lambda (s) (filter (lambda (x) (> x 1.0f)) (map (lambda (x) (* x 0.75f)) s)))
      (filter (lambda (x) (< x 100.0f)) xs))))";

/// `iterate-until` the length stops changing, starting from a filter result; its condition
/// is a `bool` computed by kernels from both states' lengths.
#[test]
fn iterate_until_a_filter_results_length_stops_changing() {
    let xs = || vec![floats(&[1.5, 2.0, 4.0, 8.0, 16.0, 200.0, 0.5, 3.0])];
    assert_eq!(both(SETTLE, xs, &[("N", 8)]), "[1.4238281,2.8476563]");
    both(SETTLE, || vec![spread(6000)], &[("N", 6000)]);
    let plan = lift::compile(SETTLE, &lift::Options::default())
        .expect("compiles")
        .text(lift::Emit::Plan)
        .expect("plan");
    insta::assert_snapshot!("host_exist_plan_until", plan);
}

/// A host `if` on a value computed from the filtered state chooses the step's kernels; each
/// branch returns a filter result of the state's capacity (`pack` makes one of a map).
#[test]
fn a_host_if_chooses_between_filter_results() {
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K
          (lambda (s)
            (if (> (at 0 (reduce + 0.0f s)) 10.0f)
              (filter (lambda (x) (> x 1.0f)) (map (lambda (x) (* x 0.5f)) s))
              (pack (map (lambda (x) (* x 3.0f)) s))))
          xs)))";
    let xs = || vec![floats(&[1.5, 2.0, 4.0, 8.0, 16.0, 200.0, 0.5, 3.0])];
    // The sum 235 > 10: halved, all up to 1 dropped; 115.5: the same, [2, 4, 50]; then [2, 25]
    // and [12.5]. From [1, 2]: the sum 3 is not above 10, so tripled.
    assert_eq!(both(src, xs, &[("N", 8), ("K", 2)]), "[2.0,4.0,50.0]");
    assert_eq!(both(src, xs, &[("N", 8), ("K", 4)]), "[12.5]");
    assert_eq!(
        both(src, || vec![floats(&[1.0, 2.0])], &[("N", 2), ("K", 1)]),
        "[3.0,6.0]"
    );
    // Without the `pack`, the array branch is packed as LANGUAGE.md lets `pack` be omitted
    // (it was "the branches of `if` have different types").
    let implicit = src.replace(
        "(pack (map (lambda (x) (* x 3.0f)) s))",
        "(map (lambda (x) (* x 3.0f)) s)",
    );
    assert_eq!(both(&implicit, xs, &[("N", 8), ("K", 4)]), "[12.5]");
    assert_eq!(
        both(&implicit, || vec![floats(&[1.0, 2.0])], &[("N", 2), ("K", 2)]),
        "[9.0,18.0]"
    );
    // An array parameter as a branch: the driver gives it a length.
    let top = "(lift (N) ((array-type float N) float)
      (lambda (xs t) (if (> t 1.0f) (filter (lambda (x) (> x 1.0f)) xs) xs)))";
    let args = |t: f32| move || vec![floats(&[0.5, 2.0, 3.0, 0.25]), Value::Float(t)];
    assert_eq!(both(top, args(3.0), &[("N", 4)]), "[2.0,3.0]");
    assert_eq!(both(top, args(0.5), &[("N", 4)]), "[0.5,2.0,3.0,0.25]");
}

/// A filter result computed before a loop and read by every step (it was refused), and a
/// filter result as an `iterate-until` state whose condition is a literal.
#[test]
fn filter_results_cross_host_sections() {
    let across = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (let big (filterGlb (lambda (x) (> x 1.0f)) xs)
          (iterate K (lambda (s) (mapGlb (lambda (x) (+ x (at 0 (reduceSeq (lambda (a y) (+ a y)) 0.0f big)))) s)) xs))))";
    let state = "(lift (N) ((array-type float N))
      (lambda (xs)
        (iterate-until #10 (lambda (p q) false)
          (lambda (s) (let t (mapGlb (lambda (x) (* x 0.9f)) s) (filterGlb (lambda (x) (> x 1.0f)) t)))
          xs)))";
    let xs = || vec![floats(&[0.5, 2.0, 3.0, 0.25])];
    assert_eq!(both(across, xs, &[("N", 4), ("K", 3)]), "[15.5,17.0,18.0,15.25]");
    assert_eq!(both(state, xs, &[("N", 4)]), "[1.0460349]");
    // A map-only step over a filter result keeps its (device-side) length: the reader unpacks
    // the initial filter result, and the state `[float]X` is carried as one (it was refused by
    // `validate` as a kernel nested in a kernel).
    let kept = "(lift (N K) ((array-type float N))
      (lambda (xs) (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) (filterGlb (lambda (x) (> x 1.0f)) xs))))";
    let zs = || vec![floats(&[0.5, 2.0, 3.0, 0.25, 4.0, 5.0, 1.5, 0.1])];
    assert_eq!(both(kept, zs, &[("N", 8), ("K", 3)]), "[16.0,24.0,32.0,40.0,12.0]");
    assert_eq!(both(kept, zs, &[("N", 8), ("K", 0)]), "[2.0,3.0,4.0,5.0,1.5]");
    // A loop over a filter result inside a loop over an array, read after it: its buffers are
    // made once and reused every outer step.
    let nested = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate #3
          (lambda (s)
            (let big (iterate K (lambda (t) (filter (lambda (x) (> x 1.0f)) (map (lambda (x) (* x 0.8f)) t))) s)
              (map (lambda (x) (+ x (at 0 (reduce + 0.0f big)))) s)))
          xs)))";
    let ys = || vec![floats(&[1.5, 2.0, 4.0, 8.0, 16.0, 200.0, 0.5, 3.0])];
    for k in [1, 2] {
        both(nested, ys, &[("N", 8), ("K", k)]);
    }
}

/// A step whose filter result may be longer than its state (the state's buffers have the
/// initial state's capacity) is refused at its place, not run past its buffers.
#[test]
fn a_step_that_may_grow_its_filter_result_is_refused() {
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K (lambda (s) (filter (lambda (x) (> x 1.0f)) (join (map (lambda (x) (generate #2 (lambda (i) x))) s)))) xs)))";
    let err = lift::compile(src, &lift::Options::default()).expect_err("refused");
    let text = err.render("grow.lisp", src);
    assert!(
        text.contains("may return a longer filter result (up to (2*N) elements)") && !text.contains("internal"),
        "{text}"
    );
}

/// A host condition may be a `bool` computed by kernels, not only a `[bool]1`: it is computed
/// into a one-element buffer (it was refused: "a scalar computation outside any map").
#[test]
fn scalar_bool_conditions_computed_by_kernels() {
    let branch = SIGN
        .replacen("(if (join (mapGlb", "(if (at 0 (join (mapGlb", 1)
        .replacen("(split N xs))", "(split N xs)))", 1);
    for (xs, want) in [(vec![1.0, 2.0], "[2.0,4.0]"), (vec![1.0, -2.0], "[-1.0,2.0]")] {
        assert_eq!(both(&branch, || vec![floats(&xs)], &[("N", 2)]), want);
    }
    // Bound by a `let` and read only by host `if`s, it is computed the same way.
    let bound = "(lift (N) ((array-type float N))
      (lambda (xs)
        (let pos (at 0 (join (mapGlb (lambda (all) (reduceSeq (lambda (a x) (and a (> x 0.0f))) true all)) (split N xs))))
          (if pos (mapGlb (lambda (x) (* x 2.0f)) xs) (mapGlb (lambda (x) (- 0.0f x)) xs)))))";
    for (xs, want) in [(vec![1.0, 2.0], "[2.0,4.0]"), (vec![1.0, -2.0], "[-1.0,2.0]")] {
        assert_eq!(both(bound, || vec![floats(&xs)], &[("N", 2)]), want);
    }
    let until = "(lift (N) ((array-type float N))
      (lambda (xs)
        (iterate-until #20
          (lambda (p q) (> (at 0 (reduce min 1000.0f q)) (+ 9.5f (at 0 (reduce + 0.0f (map (lambda (x) 0.0f) p))))))
          (lambda (s) (mapGlb (lambda (x) (+ x 1.0f)) s))
          xs)))";
    let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
    assert_eq!(both(until, xs, &[("N", 4)]), "[10.0,11.0,12.0,13.0]");
}

/// A size condition on the state's length (`split #2` of it) is checked on the device by the
/// step that reads it, and reported with the length it found (it was "internal: a checked
/// length has no buffer": the state's length is an argument's buffer, not the unit's own).
#[test]
fn a_size_check_on_a_filter_result_state_reports_its_length() {
    let src = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K (lambda (s) (filter (lambda (x) (> x 1.0f)) (join (map (lambda (r) (map (lambda (x) (* x 0.9f)) r)) (split #2 s))))) xs)))";
    let xs = || vec![floats(&[0.5, 2.0, 3.0, 0.25, 4.0, 5.0, 1.5, 0.1])];
    let sizes = [("N", 8), ("K", 2)];
    let err = run(src, xs(), &sizes, None).expect_err("interpreter");
    assert!(err.contains("length 5: 5 is not a multiple of 2"), "{err}");
    let Some(device) = crate::opencl::device() else { return };
    let err = run(src, xs(), &sizes, Some(&device)).expect_err("OpenCL");
    assert!(
        err.contains("has 5 elements, not a multiple of 2") && !err.contains("internal"),
        "{err}"
    );
}

/// A tuple holding arrays as a host value: each array in slots of its own (it was refused as
/// "a tuple holding arrays as the value of a program with host sections"). A host `if` on a
/// scalar chooses between pairs; a loop starts from one component and a kernel reads the
/// other through the `let`-bound pair; the pair itself is part of the value.
#[test]
fn tuples_holding_arrays_are_host_values() {
    let src = "(lift (N K) ((array-type float N) (array-type float N) float)
      (lambda (xs ys t)
        (let p (if (> t 1.0f)
                 (tuple (mapGlb (lambda (x) (+ x 1.0f)) xs) ys)
                 (tuple xs (mapGlb (lambda (y) (- 0.0f y)) ys)))
          (tuple 0.5f
                 (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) (get #0 p))
                 (mapGlb (lambda (y) (* y 3.0f)) (get #1 p))
                 (tuple t p)))))";
    let args = |t: f32| {
        move || {
            vec![
                floats(&[1.0, 2.0, 3.0, 4.0]),
                floats(&[0.5, 1.5, -2.0, 4.0]),
                Value::Float(t),
            ]
        }
    };
    let cases = [
        (
            2.0,
            2,
            "[0.5,[8.0,12.0,16.0,20.0],[1.5,4.5,-6.0,12.0],[2.0,[[2.0,3.0,4.0,5.0],[0.5,1.5,-2.0,4.0]]]]",
        ),
        (
            0.0,
            2,
            "[0.5,[4.0,8.0,12.0,16.0],[-1.5,-4.5,6.0,-12.0],[0.0,[[1.0,2.0,3.0,4.0],[-0.5,-1.5,2.0,-4.0]]]]",
        ),
        (
            2.0,
            0,
            "[0.5,[2.0,3.0,4.0,5.0],[1.5,4.5,-6.0,12.0],[2.0,[[2.0,3.0,4.0,5.0],[0.5,1.5,-2.0,4.0]]]]",
        ),
    ];
    for (t, k, want) in cases {
        assert_eq!(both(src, args(t), &[("N", 4), ("K", k)]), want, "t={t} K={k}");
    }
    // A filter result beside a loop: its length read back with it.
    let filtered = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (tuple (filter (lambda (x) (> x 1.5f)) xs)
               (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) xs))))";
    let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
    assert_eq!(
        both(filtered, xs, &[("N", 4), ("K", 1)]),
        "[[2.0,3.0,4.0],[2.0,4.0,6.0,8.0]]"
    );
    // A host loop's state stays one array (LANGUAGE.md, "Host sections").
    let state = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K (lambda (s) (tuple (mapGlb (lambda (x) (* x 2.0f)) (get #1 s)) (get #0 s))) (tuple xs xs))))";
    let err = run(state, xs(), &[("N", 4), ("K", 1)], Some(&None)).expect_err("refused");
    assert!(
        err.contains("the state of a host-level `iterate` must be an array"),
        "{err}"
    );
}

/// Values stored in several buffers as a host program's value (they were refused as not
/// supported yet): an array of tuples holding arrays beside a loop, and rows of filter
/// results of a loop's value, each computed by a unit run on its own. Read again by a
/// kernel, such a value is refused cleanly.
#[test]
fn struct_of_arrays_values_of_host_programs() {
    let pairs = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (tuple (mapGlb (lambda (w) (toGlobal (tuple (reduceSeq (lambda (a x) (+ a x)) 0.0f w) (mapSeq (lambda (x) (* x 2.0f)) w)))) (split #2 xs))
               (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) xs))))";
    let rows = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (mapGlb (lambda (w) (toGlobal (filterSeq (lambda (x) (> x 4.0f)) w)))
          (split #2 (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) xs)))))";
    let xs = || vec![floats(&[1.0, 2.0, 3.0, 4.0])];
    let sizes = [("N", 4), ("K", 1)];
    assert_eq!(
        both(pairs, xs, &sizes),
        "[[[[3.0],[2.0,4.0]],[[7.0],[6.0,8.0]]],[2.0,4.0,6.0,8.0]]"
    );
    assert_eq!(both(rows, xs, &sizes), "[[],[6.0,8.0]]");
    // Two steps: [4, 8, 12, 16] in rows [4, 8] and [12, 16].
    assert_eq!(both(rows, xs, &[("N", 4), ("K", 2)]), "[[8.0],[12.0,16.0]]");
    let read_again = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (let r (mapGlb (lambda (w) (toGlobal (tuple (reduceSeq (lambda (a x) (+ a x)) 0.0f w) (mapSeq (lambda (x) (* x 2.0f)) w))))
                 (split #2 (iterate K (lambda (s) (mapGlb (lambda (x) (* x 2.0f)) s)) xs)))
          (mapGlb (lambda (p) (at 0 (get #0 p))) r))))";
    let err = run(read_again, xs(), &sizes, Some(&None)).expect_err("refused");
    assert!(
        err.contains("read again after a host section is not supported yet"),
        "{err}"
    );
}
