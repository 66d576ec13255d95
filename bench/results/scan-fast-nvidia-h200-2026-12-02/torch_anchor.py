# Anchors in the same command: a device copy of the bytes and torch.cumsum (CUB's scan), median
# of 20 timed runs after 3 warm-ups, CUDA events.
import torch
def med(f, reps=20):
    for _ in range(3): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2]
x = torch.rand(1 << 28, device="cuda"); y = torch.empty_like(x)
print("torch copy 2^28 floats: %.4f ms" % med(lambda: y.copy_(x)))
print("torch.cumsum 2^28 floats: %.4f ms" % med(lambda: torch.cumsum(x, 0, out=y)))
m = x.view(32768, 8192); o = y.view(32768, 8192)
print("torch.cumsum rows 32768x8192 (dim 1): %.4f ms" % med(lambda: torch.cumsum(m, 1, out=o)))
i = torch.randint(-1000, 1000, (1 << 28,), device="cuda", dtype=torch.int32); j = torch.empty_like(i)
print("torch.cumsum 2^28 ints: %.4f ms" % med(lambda: torch.cumsum(i, 0, out=j)))
