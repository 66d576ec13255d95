"""The Python module against the command line: results equal `lift run --backend interp` on the
same inputs, errors carry the message `lift` prints. Runs on the default OpenCL device (PoCL in
CI). The `lift` binary is $LIFT_BIN, else the workspace's target/debug/lift."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import lift

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LIFT_BIN = os.environ.get("LIFT_BIN", str(ROOT / "target" / "debug" / "lift"))


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    # Tuning results and built kernels go to the cache folder; a test's own keeps what other
    # runs tuned from changing which variant runs here.
    monkeypatch.setenv("LIFT_CACHE_DIR", str(tmp_path / "cache"))


def cli(program, inputs, tmp_path, *args):
    """`lift run PROGRAM` on `inputs` written as JSON; (exit code, stdout, stderr)."""
    data = tmp_path / "inputs.json"
    data.write_text(json.dumps({k: np.asarray(v).tolist() for k, v in inputs.items()}))
    assert pathlib.Path(LIFT_BIN).exists(), f"no lift binary at {LIFT_BIN}: build it with `cargo build`"
    p = subprocess.run([LIFT_BIN, "run", str(program), "--data", str(data), *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def interp(program, inputs, tmp_path):
    rc, out, err = cli(program, inputs, tmp_path, "--backend", "interp")
    assert rc == 0, err
    return json.loads(out)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


rng = np.random.default_rng(7)


def test_map_with_scalar_equals_interpreter(tmp_path):
    xs = rng.standard_normal(1024).astype(np.float32)
    ys = rng.standard_normal(1024).astype(np.float32)
    prog = lift.load(EXAMPLES / "saxpy.lisp")
    got = prog(alpha=2.5, xs=xs, ys=ys)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (1024,)
    np.testing.assert_allclose(got, interp(EXAMPLES / "saxpy.lisp", dict(alpha=2.5, xs=xs, ys=ys), tmp_path), rtol=1e-5, atol=1e-6)
    # By position, in parameter order, the same.
    np.testing.assert_array_equal(prog(2.5, xs, ys), got)
    assert prog.params == ["alpha", "xs", "ys"] and prog.sizes == ["N"]


def test_reduction_with_scalar_param_equals_interpreter(tmp_path):
    path = write(
        tmp_path,
        "scaled_sum.lisp",
        "(lift (N) ((array-type float N) float)"
        " (lambda (xs alpha) (reduce + 0.0f (map (lambda (x) (* alpha x)) xs))))",
    )
    xs = rng.uniform(-1, 1, 4096).astype(np.float32)
    got = lift.load(path)(xs=xs, alpha=np.float32(0.5))
    want = interp(path, dict(xs=xs, alpha=0.5), tmp_path)
    assert got.shape == (1,)
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_2d_program_equals_interpreter(tmp_path):
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 12)).astype(np.float32)
    got = lift.load(EXAMPLES / "hl_mm.lisp")(a=a, b=b)
    assert got.shape == (16, 12)
    np.testing.assert_allclose(got, interp(EXAMPLES / "hl_mm.lisp", dict(a=a, b=b), tmp_path), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_int_programs_equal_interpreter(tmp_path):
    path = write(
        tmp_path,
        "affine.lisp",
        "(lift (N) ((array-type int N) int) (lambda (xs k) (map (lambda (x) (+ (* x k) 1)) xs)))",
    )
    xs = rng.integers(-1000, 1000, 300).astype(np.int32)
    got = lift.load(path)(xs, 7)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, interp(path, dict(xs=xs, k=7), tmp_path))
    # An array of tuples comes back as a list of tuples.
    as_, bs = np.array([7, -7, 100, 2147483], np.int32), np.array([2, -2, 7, 1000], np.int32)
    tuples = lift.load(EXAMPLES / "int_arith.lisp")(as_, bs)
    assert all(isinstance(t, tuple) for t in tuples)
    assert [list(t) for t in tuples] == interp(EXAMPLES / "int_arith.lisp", {"as": as_, "bs": bs}, tmp_path)


def test_scalar_and_tuple_results(tmp_path):
    prog = lift.loads("(lift () (float int) (lambda (a b) (tuple (* a 2.0f) (+ b 1))))")
    assert prog(1.5, 4) == (3.0, 5)


def test_interpreter_backend(tmp_path):
    xs = np.arange(16, dtype=np.float32)
    got = lift.load(EXAMPLES / "hl_sum.lisp", backend="interp")(xs)
    assert got.tolist() == interp(EXAMPLES / "hl_sum.lisp", dict(xs=xs), tmp_path) == [120.0]


def test_bad_program_raises_the_compilers_message(tmp_path):
    path = write(tmp_path, "bad.lisp", "(lift (N) ((array-type float N)) (lambda (xs) (map (lambda (x) (* x y)) xs)))")
    with pytest.raises(lift.Error) as e:
        lift.load(path)
    rc, _, err = cli(path, dict(xs=[1.0]), tmp_path)
    assert rc == 1
    assert "unknown name `y`" in str(e.value) and f"{path}:1:69" in str(e.value)
    assert str(e.value).strip() == err.strip()


def test_wrong_dtype_and_shape_raise(tmp_path):
    prog = lift.loads("(lift (N) ((array-type int N)) (lambda (xs) (map (lambda (x) (+ x 1)) xs)))")
    with pytest.raises(lift.Error, match=r"<argument xs>: dtype <c8 cannot be read as int"):
        prog(np.ones(3, np.complex64))
    with pytest.raises(lift.Error, match=r"element \[1\] is 0.5, which is not an int"):
        prog(np.array([1.0, 0.5], np.float32))
    with pytest.raises(lift.Error, match=r"shape \(2, 2\) \(2 dimensions\) but `xs` has type \[int\]N"):
        prog(np.ones((2, 2), np.int32))
    with pytest.raises(lift.Error, match="no data for parameters `xs`, `ys`"):
        lift.load(EXAMPLES / "saxpy.lisp")(alpha=1.0)
    with pytest.raises(lift.Error, match="given twice"):
        prog(np.ones(4, np.int32), xs=np.ones(4, np.int32))
    with pytest.raises(lift.Error, match="takes 1 argument, 2 given"):
        prog(np.ones(4, np.int32), 1)


def test_unknown_device_raises():
    with pytest.raises(lift.Error, match="no-such-device"):
        lift.load(EXAMPLES / "saxpy.lisp", device="no-such-device")


def test_devices_and_device_by_id(tmp_path):
    devs = lift.devices()
    assert devs, "no OpenCL device"
    for d in devs:
        assert set(d) >= {"id", "name", "type"}
        assert d["id"].count(":") == 1
    xs = np.ones(64, np.float32)
    # By id, and by its name as `lift run --device` takes it.
    for device in (devs[0]["id"], devs[0]["name"]):
        prog = lift.load(EXAMPLES / "hl_sum.lisp", device=device)
        assert prog.device == device and prog(xs).tolist() == [64.0]


def test_tune_then_run(tmp_path):
    prog = lift.load(EXAMPLES / "hl_sum.lisp")
    report = prog.tune(sizes={"N": 1024})
    assert isinstance(report, str) and report
    xs = rng.uniform(-1, 1, 1024).astype(np.float32)
    np.testing.assert_allclose(prog(xs), interp(EXAMPLES / "hl_sum.lisp", dict(xs=xs), tmp_path), rtol=1e-4)
    with pytest.raises(lift.Error, match="budget"):
        prog.tune(sizes={"N": 1024}, budget=-1.0)


def test_run_with_sizes():
    prog = lift.load(EXAMPLES / "hl_sum.lisp")
    xs = np.ones(256, np.float32)
    assert prog.run({"xs": xs}, sizes={"N": 256}).tolist() == [256.0]
    with pytest.raises(lift.Error, match="N is 5 from --size N=5 but 256 from xs"):
        prog.run({"xs": xs}, sizes={"N": 5})


def test_device_arrays_chain_without_copies_and_equal_interpreter(tmp_path):
    prog = lift.load(EXAMPLES / "saxpy.lisp")
    x = rng.standard_normal(300).astype(np.float32)
    y = rng.standard_normal(300).astype(np.float32)
    xs = prog.to_device(x)
    assert isinstance(xs, lift.Array) and xs.shape == (300,) and xs.dtype == np.float32 and len(xs) == 300
    # A NumPy argument beside a device array is copied over; the result stays on the device.
    once = prog(alpha=0.5, xs=xs, ys=y)
    assert isinstance(once, lift.Array)
    moved = prog.bytes_moved
    twice = prog(0.5, xs, once)
    assert prog.bytes_moved == moved, "a call on device arrays moves no data"
    want = interp(EXAMPLES / "saxpy.lisp", dict(alpha=0.5, xs=x, ys=y), tmp_path)
    np.testing.assert_array_equal(once.numpy(), np.asarray(want, np.float32))
    want2 = interp(EXAMPLES / "saxpy.lisp", dict(alpha=0.5, xs=x, ys=np.asarray(want, np.float32)), tmp_path)
    np.testing.assert_array_equal(np.asarray(twice), np.asarray(want2, np.float32))
    assert "generic kernels" in prog.used


def test_device_arrays_of_a_2d_program():
    prog = lift.load(EXAMPLES / "hl_mm.lisp")
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 12)).astype(np.float32)
    c = prog(a=prog.to_device(a), b=prog.to_device(b))
    assert c.shape == (16, 12)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, atol=1e-4)
    # The generic kernels may sum in another order than those `lift run` builds for these sizes.
    np.testing.assert_allclose(c.numpy(), prog(a=a, b=b), rtol=1e-5, atol=1e-5)


def test_tune_then_device_arrays_run_the_tuned_sizes():
    prog = lift.load(EXAMPLES / "hl_sum.lisp")
    prog.tune(sizes={"N": 512})
    ones = prog.to_device(np.ones(512, np.float32))
    assert prog(ones).numpy().tolist() == [512.0]
    assert prog.used.endswith("built for N=512")
    assert prog(prog.to_device(np.ones(100, np.float32))).numpy().tolist() == [100.0]
    assert "generic kernels" in prog.used


def test_programs_sharing_a_device_context_chain_without_copies(tmp_path):
    saxpy = lift.load(EXAMPLES / "saxpy.lisp")
    matvec = lift.load(EXAMPLES / "hl_matvec.lisp")
    matvec.share(saxpy)
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    m = rng.standard_normal((5, 16)).astype(np.float32)
    mat = matvec.to_device(m)
    v = saxpy(alpha=2.0, xs=saxpy.to_device(x), ys=saxpy.to_device(y))
    moved = saxpy.bytes_moved
    mv = matvec(mat=mat, v=v)  # saxpy's result, on the device
    assert saxpy.bytes_moved == moved == matvec.bytes_moved, "the chain moved data"
    want_v = interp(EXAMPLES / "saxpy.lisp", dict(alpha=2.0, xs=x, ys=y), tmp_path)
    np.testing.assert_array_equal(v.numpy(), np.asarray(want_v, np.float32))
    want = interp(EXAMPLES / "hl_matvec.lisp", dict(mat=m, v=np.asarray(want_v, np.float32)), tmp_path)
    np.testing.assert_allclose(mv.numpy(), np.asarray(want, np.float32), rtol=1e-5, atol=1e-5)
    # A program that does not share the context refuses the arrays.
    apart = lift.load(EXAMPLES / "hl_matvec.lisp")
    with pytest.raises(lift.Error, match="another context"):
        apart(mat=apart.to_device(m), v=v)


def test_device_array_errors_raise():
    prog = lift.load(EXAMPLES / "saxpy.lisp")
    xs = prog.to_device(np.ones(8, np.float32))
    with pytest.raises(lift.Error, match="dtype complex64"):
        prog.to_device(np.ones(3, np.complex64))
    with pytest.raises(lift.Error, match=r"argument `ys` has shape \[4\], but the sizes the arguments give \(N=8\) make it \[8\]"):
        prog(alpha=1.0, xs=xs, ys=np.ones(4, np.float32))
    with pytest.raises(lift.Error, match="no arrays of f64 of rank 1"):
        prog(alpha=1.0, xs=xs, ys=np.ones(8, np.float64))
    with pytest.raises(lift.Error, match="argument `alpha` must be a f32 scalar"):
        prog(alpha="two", xs=xs, ys=xs)
    other = lift.load(EXAMPLES / "saxpy.lisp")
    with pytest.raises(lift.Error, match="another context"):
        other(alpha=1.0, xs=other.to_device(np.ones(8, np.float32)), ys=xs)
    with pytest.raises(lift.Error, match="need the `opencl` backend"):
        lift.load(EXAMPLES / "saxpy.lisp", backend="interp").to_device(np.ones(8, np.float32))


def test_threads_share_a_programs_device_context():
    import threading

    prog = lift.load(EXAMPLES / "saxpy.lisp")
    results, errors = {}, []

    def work(k):
        try:
            # The first calls of all threads race to build the library: one builds, all use it.
            xs = prog.to_device(np.full(64, k, np.float32))
            acc = prog.to_device(np.zeros(64, np.float32))
            for _ in range(20):
                acc = prog(1.0, xs, acc)
            results[k] = acc.numpy()
        except Exception as e:  # reported below, with the thread's number
            errors.append((k, e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], np.full(64, 20.0 * k, np.float32))
