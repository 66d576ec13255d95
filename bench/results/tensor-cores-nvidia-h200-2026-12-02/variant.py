# Hand-edited variants of a tensor-core kernel emitted by `lift` (gen/mma.rs), to see where its
# time goes: python3 variant.py IN.cl KIND OUT.cl, KIND one of
#   same      the kernel as emitted
#   noload    the loop's global reads of the next step left out (stages refilled from stale registers)
#   compute   no global reads and no stores into the next stage: fragments, mma.sync, barriers
#   nomma     the mma.sync left out (the copy pipeline and barriers alone)
#   nocvt     the cvt.rna.tf32 rounding left out (the tensor cores truncate)
#   unroll2   the K loop unrolled twice (stage offsets constant)
import re, sys
src, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src).read().split("\n")
res = []
in_loop = False
ifs = 0
skip_next_asfloat = False
for ln in lines:
    s = ln.strip()
    if s.startswith("for (int v_kt_"):
        in_loop = True
        if kind == "unroll2":
            res.append("#pragma unroll 2")
    if in_loop and re.match(r"if \(v_kt_\d+ < \d+\) \{", s):
        ifs += 1
        if (kind in ("noload", "compute") and ifs == 1) or (kind == "compute" and ifs == 2):
            ln = re.sub(r"< \d+\)", "< 0)", ln)
    if kind == "nomma" and "mma.sync" in s:
        continue
    if kind == "nocvt":
        if "cvt.rna.tf32" in s:
            skip_next_asfloat = True
            continue
        if skip_next_asfloat and "as_float(v_tf32" in s:
            skip_next_asfloat = False
            continue
    res.append(ln)
open(out, "w").write("\n".join(res))
print(kind, "loop ifs", ifs, file=sys.stderr)
