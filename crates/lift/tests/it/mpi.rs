//! One program over MPI ranks (issue 32; `--features mpi`): `mpirun -n 2` and `-n 3` of
//! `lift run --mpi` on this host's OpenCL device equal the reference interpreter for a map, a
//! matrix product, a reduction, a filter, a host loop whose step reads the whole state
//! (all-gather) and one that reads its neighbours' rows (halo exchange), and a convergence loop
//! (an all-reduce of each rank's test); a reduction is combined by MPI_Reduce; a failing rank
//! stops every rank with one error naming it; `lift bench --mpi` compares and times.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mpirun` as CI and the development machines run it: as root, more ranks than cores.
fn mpirun(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.args(["300", "mpirun", "--oversubscribe", "--allow-run-as-root", "-n"])
        .arg(ranks.to_string());
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(env!("CARGO_BIN_EXE_lift"))
        .args(args)
        .output()
        .expect("mpirun runs (install openmpi-bin)")
}

fn device_present() -> bool {
    match host_runner::devices() {
        Ok(d) if !d.is_empty() => true,
        Ok(_) => {
            host_runner::skip_without_device("no OpenCL device");
            false
        }
        Err(e) => {
            host_runner::skip_without_device(&e.to_string());
            false
        }
    }
}

/// A folder of its own for each test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lift-mpi-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Floats in [-1, 1) from a fixed seed, rounded so that JSON carries them exactly.
fn floats(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (((s >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) * 1024.0).round() / 1024.0
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("written");
    p.display().to_string()
}

fn numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| numbers(x, out)),
        serde_json::Value::Number(n) => out.push(n.as_f64().expect("a number")),
        other => panic!("not a number: {other}"),
    }
}

/// `lift run` of `program` over 2 and 3 ranks equals the interpreter.
fn agrees_over_ranks(name: &str, program: &str, data: &serde_json::Value, sizes: &[&str]) {
    if !device_present() {
        return;
    }
    let dir = scratch(name);
    let prog = write(&dir, "prog.lisp", program);
    let data = write(&dir, "in.json", &data.to_string());
    let mut args = vec!["run", prog.as_str(), "--data", data.as_str()];
    for s in sizes {
        args.extend(["--size", s]);
    }
    let interp = Command::new(env!("CARGO_BIN_EXE_lift"))
        .args(&args)
        .args(["--backend", "interp"])
        .output()
        .expect("lift runs");
    assert!(interp.status.success(), "{}", String::from_utf8_lossy(&interp.stderr));
    let mut want = vec![];
    numbers(&serde_json::from_slice(&interp.stdout).expect("JSON"), &mut want);
    for ranks in [2, 3] {
        let out = mpirun(ranks, &[&args[..], &["--mpi"]].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name} over {ranks} ranks: {stderr}");
        let mut got = vec![];
        numbers(
            &serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}: {stderr}")),
            &mut got,
        );
        assert_eq!(
            got.len(),
            want.len(),
            "{name} over {ranks} ranks: one result, printed once"
        );
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                "{name} over {ranks} ranks: element {i} is {g}, the interpreter's {w}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_map_over_ranks_equals_the_interpreter() {
    let n = 1001;
    agrees_over_ranks(
        "map",
        "(lift (N) (float (array-type float N) (array-type float N))
          (lambda (alpha xs ys)
            (toGlobal (mapGlb (lambda (p) (+ (* alpha (get #0 p)) (get #1 p))) (zip xs ys)))))",
        &serde_json::json!({ "alpha": 1.5, "xs": floats(n, 1), "ys": floats(n, 2) }),
        &[],
    );
}

#[test]
fn a_matrix_product_over_ranks_scatters_rows_and_broadcasts_the_other_operand() {
    let (m, k, n) = (37, 19, 23);
    let rows = |r: usize, c: usize, seed: u64| (0..r).map(|i| floats(c, seed * 100 + i as u64)).collect::<Vec<_>>();
    agrees_over_ranks(
        "mm",
        "(lift (M K N)
          ((array-type (array-type float K) M) (array-type (array-type float N) K))
          (lambda (a b)
            (map (lambda (row)
                   (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                              (transpose b))))
                 a)))",
        &serde_json::json!({ "a": rows(m, k, 3), "b": rows(k, n, 4) }),
        &[],
    );
}

#[test]
fn a_reduction_over_ranks_combines_one_partial_per_rank() {
    agrees_over_ranks(
        "sum",
        "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))",
        &serde_json::json!({ "xs": floats(5000, 5) }),
        &[],
    );
}

/// `--time`'s lines of every rank, from `mpirun -n ranks lift run … --mpi --time`.
fn timed_over_ranks(name: &str, ranks: usize, program: &str, data: &serde_json::Value, sizes: &[&str]) -> String {
    let dir = scratch(name);
    let prog = write(&dir, "prog.lisp", program);
    let data = write(&dir, "in.json", &data.to_string());
    let mut args = vec!["run", prog.as_str(), "--data", data.as_str(), "--mpi", "--time"];
    for s in sizes {
        args.extend(["--size", s]);
    }
    let out = mpirun(ranks, &args, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name}: {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
    stderr
}

#[test]
fn a_reduction_over_ranks_is_combined_by_mpi_reduce() {
    if !device_present() {
        return;
    }
    let product = "(lift (N) ((array-type int N)) (lambda (xs) (reduce * 1 xs)))";
    let xs: Vec<i64> = (0..600).map(|i| if i % 7 == 0 { -1 } else { 1 }).collect();
    agrees_over_ranks("product", product, &serde_json::json!({ "xs": xs }), &[]);
    let sum = "(lift (N) ((array-type float N)) (lambda (xs) (reduce + 0.0f xs)))";
    let stderr = timed_over_ranks("sum-timed", 3, sum, &serde_json::json!({ "xs": floats(3000, 9) }), &[]);
    assert_eq!(
        stderr.matches("partials combined on rank 0 by MPI_Reduce").count(),
        3,
        "{stderr}"
    );
}

/// A convergence loop: each rank tests its own rows of the previous and the new state, and one
/// all-reduce of the ranks' verdicts decides the exit, at the step one process leaves at.
#[test]
fn a_convergence_loop_over_ranks_leaves_when_every_ranks_rows_converged() {
    if !device_present() {
        return;
    }
    let ex = crate::examples_dir();
    let src = std::fs::read_to_string(ex.join("host_jacobi.lisp")).expect("the example");
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ex.join("host_jacobi.json")).expect("its data")).expect("JSON");
    agrees_over_ranks("jacobi-until", &src, &data, &[]);
    // Longer rows, a zero pad, and a test that every element is unchanged (a fold by `and`).
    let until = |test: &str| {
        format!(
            "(lift (N) ((array-type float N))
              (lambda (xs)
                (iterate-until #400
                  (lambda (prev next) (join (mapGlb (lambda (all) {test}) (split N (zip prev next)))))
                  (lambda (s) (mapGlb (lambda (w) (* (+ (+ (at 0 w) (at 1 w)) (at 2 w)) 0.3333f))
                                      (slide #3 #1 (pad #1 #1 0.0f s))))
                  xs)))"
        )
    };
    let tolerance = until(
        "(mapSeq (lambda (m) (< m 0.002f))
           (reduceSeq (lambda (a pq) (max a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all))",
    );
    let data = serde_json::json!({ "xs": floats(90, 21) });
    agrees_over_ranks("until-tolerance", &tolerance, &data, &[]);
    let unchanged = until("(reduceSeq (lambda (ok pq) (and ok (= (get #0 pq) (get #1 pq)))) true all)");
    agrees_over_ranks("until-unchanged", &unchanged, &data, &[]);
    let stderr = timed_over_ranks("until-timed", 3, &tolerance, &data, &[]);
    let tests = stderr
        .lines()
        .filter(|l| l.contains("convergence tests (its rows, then an all-reduce)"))
        .count();
    assert_eq!(tests, 3, "every rank tests its rows: {stderr}");
    // A test of a sum is no conjunction over the ranks' rows: rank 0 runs the loop whole.
    let sum = until(
        "(mapSeq (lambda (m) (< m 0.01f))
           (reduceSeq (lambda (a pq) (+ a (abs (- (get #0 pq) (get #1 pq))))) 0.0f all))",
    );
    agrees_over_ranks("until-sum", &sum, &data, &[]);
}

#[test]
fn a_filter_over_ranks_gathers_parts_of_their_own_lengths() {
    agrees_over_ranks(
        "filter",
        "(lift (N) ((array-type float N))
          (lambda (xs)
            (toGlobal (mapGlb (lambda (x) (+ x 100.0f)) (toGlobal (filterGlb (lambda (x) (< x 0.0f)) xs))))))",
        &serde_json::json!({ "xs": floats(777, 7) }),
        &[],
    );
}

/// n-body's shape: each step reads every element of the state, so the parts are all-gathered.
#[test]
fn a_host_loop_reading_the_whole_state_all_gathers_it_each_step() {
    agrees_over_ranks(
        "allgather",
        "(lift (N K) ((array-type float N))
          (lambda (xs)
            (iterate K
              (lambda (s)
                (join (mapGlb (lambda (x)
                                (mapSeq (lambda (t) (+ (* x 0.5f) (* t 0.01f)))
                                        (reduceSeq (lambda (acc y) (+ acc y)) 0.0f s)))
                              s)))
              xs)))",
        &serde_json::json!({ "xs": floats(101, 11) }),
        &["K=4"],
    );
}

/// A stencil's step reads one row beyond each end of its slice: neighbours exchange halo rows.
#[test]
fn a_stencil_host_loop_exchanges_halo_rows_with_its_neighbours() {
    agrees_over_ranks(
        "halo",
        "(lift (N K) ((array-type float N))
          (lambda (xs)
            (iterate K
              (lambda (s)
                (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.3333f)) (reduceSeq + 0.0f w))))
                              (slide #3 #1 (pad-clamp #1 #1 s)))))
              xs)))",
        &serde_json::json!({ "xs": floats(301, 13) }),
        &["K=6"],
    );
    // Two rows on each side, of a pad's own value at the ends.
    let padded = "(lift (N K) ((array-type float N))
      (lambda (xs)
        (iterate K
          (lambda (s)
            (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.2f)) (reduceSeq + 0.0f w))))
                          (slide #5 #1 (pad #2 #2 0.5f s)))))
          xs)))";
    agrees_over_ranks(
        "halo-pad",
        padded,
        &serde_json::json!({ "xs": floats(200, 17) }),
        &["K=5"],
    );
    // The rows travel as the buffers' bytes, not as values.
    if !device_present() {
        return;
    }
    let dir = scratch("halo-bytes");
    let prog = write(&dir, "prog.lisp", padded);
    let data = write(&dir, "in.json", &serde_json::json!({ "xs": floats(50, 3) }).to_string());
    let out = mpirun(
        3,
        &["run", &prog, "--data", &data, "--size", "K=3", "--mpi", "--time"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.matches("3 steps' exchanges (halo rows as bytes)").count(),
        3,
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn n_body_over_ranks_equals_the_interpreter() {
    if !device_present() {
        return;
    }
    let ex = crate::examples_dir();
    let src = std::fs::read_to_string(ex.join("host_nbody.lisp")).expect("the example");
    assert!(src.contains("(iterate #1000"), "the example's loop changed");
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ex.join("host_nbody.json")).expect("its data")).expect("JSON");
    agrees_over_ranks("nbody", &src.replace("(iterate #1000", "(iterate #20"), &data, &[]);
}

#[test]
fn a_failing_rank_stops_every_rank_with_one_error_naming_it() {
    if !device_present() {
        return;
    }
    let ex = crate::examples_dir();
    let (prog, data) = (ex.join("saxpy.lisp"), ex.join("saxpy.json"));
    let args = [
        "run",
        prog.to_str().expect("a path"),
        "--data",
        data.to_str().expect("a path"),
        "--mpi",
    ];
    // Rank 1's kernels fail to build (LIFT_DEVICES_FAIL names the slice, here the rank).
    let out = mpirun(3, &args, &[(lift::devices::FAIL_VAR, "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(out.status.code() != Some(124), "a rank hung: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(crate::mentions(&stderr, "rank 1 (device "), "{stderr}");
    // (one error of lift's; the driver's build log inside it has its own `error:` lines)
    let errors = stderr.lines().filter(|l| l.starts_with("error: rank")).count();
    assert_eq!(errors, 1, "one error: {stderr}");
    // A device no rank has: every rank stops before any data moves.
    let out = mpirun(2, &[&args[..], &["--device", "9:9"]].concat(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.status.code() != Some(124), "{stderr}");
    assert!(crate::mentions(&stderr, "rank 0 (device 9:9) failed"), "{stderr}");
    // A step that fails mid-loop.
    let dir = scratch("failing-loop");
    let prog = write(
        &dir,
        "prog.lisp",
        "(lift (N K) ((array-type float N))
          (lambda (xs) (iterate K (lambda (s) (mapGlb (lambda (x) (* x 0.5f)) s)) xs)))",
    );
    let data = write(&dir, "in.json", &serde_json::json!({ "xs": floats(50, 3) }).to_string());
    let out = mpirun(
        3,
        &["run", &prog, "--data", &data, "--size", "K=3", "--mpi"],
        &[(lift::devices::FAIL_VAR, "2")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.status.code() != Some(124), "{stderr}");
    assert!(crate::mentions(&stderr, "rank 2 (device "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_not_started_by_mpirun_says_how_to_start_it() {
    let ex = crate::examples_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_lift"))
        .arg("run")
        .arg(ex.join("saxpy.lisp"))
        .arg("--data")
        .arg(ex.join("saxpy.json"))
        .arg("--mpi")
        .env_remove("OMPI_COMM_WORLD_SIZE")
        .env_remove("PMI_SIZE")
        .env_remove("PMI_RANK")
        .env_remove("PMIX_RANK")
        .output()
        .expect("lift runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(crate::mentions(&stderr, "not started by an MPI launcher"), "{stderr}");
}

#[test]
fn bench_over_ranks_reports_the_one_process_time_beside_the_split_one() {
    if !device_present() {
        return;
    }
    let ex = crate::examples_dir();
    let prog = ex.join("saxpy.lisp");
    let out = mpirun(
        2,
        &[
            "bench",
            prog.to_str().expect("a path"),
            "--size",
            "N=100000",
            "--repeats",
            "2",
            "--mpi",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("one process (rank 0's device alone"), "{stdout}");
    assert!(stdout.contains("ratio: "), "{stdout}");
    assert!(stdout.contains("results agree"), "{stdout}");
    assert_eq!(stdout.matches("ratio: ").count(), 1, "rank 0 alone prints: {stdout}");
}
