# Builds one OpenCL C file on a device and times one of its kernels (ctypes over libOpenCL, no
# other module): median of --reps launches by profiling events; prints the build log's
# ptxas lines and a JSON line. Args in kernel order: in:N (N random floats in [-1, 1)),
# out:N (N floats). Used to time hand-edited variants of a kernel `lift` emitted.
import ctypes as C, sys, json, argparse, random, array
p = argparse.ArgumentParser()
p.add_argument("src"); p.add_argument("--kernel", default="KERNEL_0")
p.add_argument("--platform", default="NVIDIA"); p.add_argument("--global", dest="gs", required=True)
p.add_argument("--local", dest="ls", required=True); p.add_argument("--arg", action="append", default=[])
p.add_argument("--reps", type=int, default=10); p.add_argument("--opts", default="")
p.add_argument("--binary"); p.add_argument("--label", default="")
p.add_argument("--check-rotate", type=int, default=0)
a = p.parse_args()
cl = C.CDLL("libOpenCL.so.1")
V, U, S = C.c_void_p, C.c_uint, C.c_size_t
for name, res, args in [
    ("clGetPlatformIDs", C.c_int, [U, C.POINTER(V), C.POINTER(U)]),
    ("clGetPlatformInfo", C.c_int, [V, U, S, V, C.POINTER(S)]),
    ("clGetDeviceIDs", C.c_int, [V, C.c_ulonglong, U, C.POINTER(V), C.POINTER(U)]),
    ("clCreateContext", V, [V, U, C.POINTER(V), V, V, C.POINTER(C.c_int)]),
    ("clCreateCommandQueue", V, [V, V, C.c_ulonglong, C.POINTER(C.c_int)]),
    ("clCreateProgramWithSource", V, [V, U, C.POINTER(C.c_char_p), C.POINTER(S), C.POINTER(C.c_int)]),
    ("clBuildProgram", C.c_int, [V, U, C.POINTER(V), C.c_char_p, V, V]),
    ("clGetProgramBuildInfo", C.c_int, [V, V, U, S, V, C.POINTER(S)]),
    ("clGetProgramInfo", C.c_int, [V, U, S, V, C.POINTER(S)]),
    ("clCreateKernel", V, [V, C.c_char_p, C.POINTER(C.c_int)]),
    ("clCreateBuffer", V, [V, C.c_ulonglong, S, V, C.POINTER(C.c_int)]),
    ("clSetKernelArg", C.c_int, [V, U, S, V]),
    ("clEnqueueNDRangeKernel", C.c_int, [V, V, U, V, C.POINTER(S), C.POINTER(S), U, V, C.POINTER(V)]),
    ("clWaitForEvents", C.c_int, [U, C.POINTER(V)]),
    ("clGetEventProfilingInfo", C.c_int, [V, U, S, V, V]),
    ("clReleaseEvent", C.c_int, [V]),
    ("clFinish", C.c_int, [V]),
]:
    f = getattr(cl, name); f.restype = res; f.argtypes = args
def ok(rc, what):
    if rc != 0:
        raise SystemExit(f"{what}: error {rc}")
n = U(); ok(cl.clGetPlatformIDs(0, None, C.byref(n)), "platforms")
plats = (V * n.value)(); ok(cl.clGetPlatformIDs(n.value, plats, None), "platforms")
plat = None
for pl in plats:
    buf = C.create_string_buffer(256); cl.clGetPlatformInfo(pl, 0x0902, 256, buf, None)
    if a.platform.lower() in buf.value.decode().lower():
        plat = pl; break
if plat is None:
    raise SystemExit(f"no platform {a.platform}")
dev = V(); ok(cl.clGetDeviceIDs(plat, 0xFFFFFFFF, 1, C.byref(dev), None), "device")
err = C.c_int()
ctx = cl.clCreateContext(None, 1, C.byref(dev), None, None, C.byref(err)); ok(err.value, "context")
q = cl.clCreateCommandQueue(ctx, dev, 2, C.byref(err)); ok(err.value, "queue")
src = open(a.src, "rb").read()
sp = C.c_char_p(src); sl = S(len(src))
prog = cl.clCreateProgramWithSource(ctx, 1, C.byref(sp), C.byref(sl), C.byref(err)); ok(err.value, "program")
rc = cl.clBuildProgram(prog, 1, C.byref(dev), a.opts.encode(), None, None)
ln = S(); cl.clGetProgramBuildInfo(prog, dev, 0x1183, 0, None, C.byref(ln))
log = C.create_string_buffer(ln.value + 1); cl.clGetProgramBuildInfo(prog, dev, 0x1183, ln.value, log, None)
for line in log.value.decode(errors="replace").splitlines():
    if any(w in line for w in ("registers", "spill", "smem", "error", "Error", "warning")):
        print(f"[{a.label}] log: {line.strip()}")
ok(rc, "build")
if a.binary:
    bs = S(); ok(cl.clGetProgramInfo(prog, 0x1165, C.sizeof(S), C.byref(bs), None), "binary size")
    b = C.create_string_buffer(bs.value); bp = C.c_char_p(C.addressof(b))
    ok(cl.clGetProgramInfo(prog, 0x1166, C.sizeof(V), C.byref(V(C.addressof(b))), None), "binary")
    open(a.binary, "wb").write(b.raw)
k = cl.clCreateKernel(prog, a.kernel.encode(), C.byref(err)); ok(err.value, "kernel")
rnd = random.Random(1)
mems = []
for i, spec in enumerate(a.arg):
    kind, cnt = spec.split(":"); cnt = int(cnt)
    if kind == "in":
        block = array.array("f", (rnd.uniform(-1, 1) for _ in range(min(cnt, 65536))))
        host = block * (cnt // len(block)) + block[:cnt % len(block)]
    else:
        host = array.array("f", bytes(4 * cnt))
    addr, _ = host.buffer_info()
    m = cl.clCreateBuffer(ctx, 1 | 0x20, 4 * cnt, V(addr), C.byref(err)); ok(err.value, f"buffer {i}")
    mems.append((m, host)); mv = V(m)
    ok(cl.clSetKernelArg(k, i, C.sizeof(V), C.byref(mv)), f"arg {i}")
gs = [int(x) for x in a.gs.split(",")]; ls = [int(x) for x in a.ls.split(",")]
G = (S * len(gs))(*gs); L = (S * len(ls))(*ls)
times = []
for r in range(a.reps + 1):
    ev = V()
    ok(cl.clEnqueueNDRangeKernel(q, k, len(gs), None, G, L, 0, None, C.byref(ev)), "launch")
    ok(cl.clWaitForEvents(1, C.byref(ev)), "wait")
    t0, t1 = C.c_ulonglong(), C.c_ulonglong()
    cl.clGetEventProfilingInfo(ev, 0x1282, 8, C.byref(t0), None); cl.clGetEventProfilingInfo(ev, 0x1283, 8, C.byref(t1), None)
    cl.clReleaseEvent(ev)
    if r > 0:
        times.append((t1.value - t0.value) / 1e6)
if a.check_rotate:
    R = a.check_rotate
    m_out, h_out = mems[-1]
    ok(C.CDLL("libOpenCL.so.1").clEnqueueReadBuffer(C.c_void_p(q), C.c_void_p(m_out), 1, C.c_size_t(0), C.c_size_t(4 * len(h_out)), C.c_void_p(h_out.buffer_info()[0]), 0, None, None), "read")
    h_in = mems[0][1]
    bad = 0
    for j in range(len(h_out) // 4):
        blk, i = divmod(j, R)
        src = blk * R + (i + 1) % R
        bad += h_out[4 * j:4 * j + 4] != h_in[4 * src:4 * src + 4]
    print(f"[{a.label}] rotate check: {bad} of {len(h_out) // 4} float4s wrong")
times.sort()
print(json.dumps({"label": a.label, "median_ms": times[len(times) // 2], "min_ms": times[0], "reps": a.reps}))
