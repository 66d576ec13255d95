#!/usr/bin/env python3
"""Expected results of the integer examples, computed with numpy and Python integers alone
(nothing of the compiler), checked against (or, with --write, written into) the `;; expect:`
line of each example.

    python3 scripts/int_examples.py          # exit 1 when an expect line differs
    python3 scripts/int_examples.py --write  # rewrite the expect lines

Conventions of the language that the computations follow: unsigned and signed integers wrap
modulo 2^width; shift and rotate counts are taken modulo the width; `shr` is arithmetic on
signed types, logical on unsigned; float to integer conversion truncates toward zero and
saturates (NaN gives 0); `as-T` reinterprets bits.
"""
import math

import numpy as np

import expect_lines

U32, U64 = (1 << 32) - 1, (1 << 64) - 1


def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def i32(v):
    return wrap(v, 32, True)


def u32(v):
    return wrap(v, 32, False)


def i64(v):
    return wrap(v, 64, True)


def u64(v):
    return wrap(v, 64, False)


def rotl(v, n, bits):
    n %= bits
    m = (1 << bits) - 1
    v &= m
    return ((v << n) | (v >> (bits - n))) & m if n else v


def f32(x):
    return float(np.float32(x))


def f32_bits(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def bits_f32(b):
    return float(np.array([b], dtype=np.uint32).view(np.float32)[0])


def f64_bits(x):
    return int(np.array([x], dtype=np.float64).view(np.uint64)[0])


def bits_f64(b):
    return float(np.array([b], dtype=np.uint64).view(np.float64)[0])


def saturate(x, lo, hi):
    """C's conversion toward zero, saturating at the type's range, NaN to 0."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return max(lo, min(hi, math.trunc(x)))


def uint_xorshift(d):
    def step(x):
        x = u32(x ^ (x << 13))
        x = u32(x ^ (x >> 17))
        return u32(x ^ (x << 5))

    out = []
    for s in d["seeds"]:
        s1 = step(s)
        out.append([s1, step(step(s1)), s1 >> 24])
    return out


def ulong_xorshift64(d):
    # numpy uint64 arithmetic wraps modulo 2^64, as the program's ulong does
    out = []
    with np.errstate(over="ignore"):
        for x in d["states"]:
            x = np.uint64(x)
            x ^= x >> np.uint64(12)
            x ^= x << np.uint64(25)
            x ^= x >> np.uint64(27)
            o = x * np.uint64(0x2545F4914F6CDD1D)
            out.append([int(x), int(o), float(np.float64(o >> np.uint64(11)) * 1.1102230246251565e-16)])
    return out


def uint_hash(d):
    out = []
    with np.errstate(over="ignore"):
        for row in d["rows"]:
            h = np.uint32(0x811C9DC5)
            for b in row:
                h = (h ^ np.uint32(b)) * np.uint32(16777619)
            b = int(h)
            f = (b & 0x98BADCFE) | (~b & U32 & 0x10325476)
            a2 = u32(b + rotl(u32(0x67452301 + f + 0xD76AA478 + b), 7, 32))
            out.append([b, a2])
    return out


def long_sum(d):
    ints = np.array(d["ints"], dtype=np.int64)
    longs = np.array(d["longs"], dtype=np.int64)
    us = np.array(d["us"], dtype=np.uint32)
    return [
        [int(ints.sum())],
        [int(longs.sum())],
        [int(us.max())],
        [int(us.sum(dtype=np.uint32))],
    ]


def uint_vectors(d):
    us, ls = d["us"], d["ls"]
    counts = [1, 2, 3, 31]
    first = [rotl(u, 3, 32) ^ (u >> counts[i % 4]) for i, u in enumerate(us)]
    second = [[~u & U32 & 0xFFFF for u in us[k : k + 4]] for k in range(0, len(us), 4)]
    third = [u64(rotl(v, 61, 64) + u64(v << [1, 63][i % 2])) for i, v in enumerate(ls)]
    return [first, second, third]


def int_bits(d):
    xs = [f32(x) for x in d["xs"]]
    floats = []
    for x in xs:
        b = f32_bits(x)
        floats.append(
            [
                b,
                bits_f32(u32(b + 1)),
                i32(b),
                saturate(x, 0, U32),
                saturate(x, -(1 << 63), (1 << 63) - 1),
                saturate(x, 0, U64),
                saturate(x, -(1 << 31), (1 << 31) - 1),
            ]
        )
    doubles = [[f64_bits(x), bits_f64(f64_bits(x)), i64(f64_bits(x))] for x in d["ds"]]
    uints = [[i32(u), f32(u), u, u32(i32(u))] for u in d["us"]]
    return [floats, doubles, uints]


def cdiv(a, b):
    """C's division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def int_wrap(d):
    out = []
    for a, b in zip(d["as"], d["bs"]):
        ua, ub = u32(a), u32(b)
        la = a
        out.append(
            [
                i32(a + b),
                i32(a * b),
                i32(-a),
                i32(abs(a)),
                a >> 4,
                ua >> 4,
                i32(a << (33 % 32)),
                i32(a << (-1 % 32)),
                i32(rotl(u32(a), 8, 32)),
                ua < ub,
                max(ua, ub),
                min(ua, ub),
                ua // max(ub, 1),
                ua % max(ub, 1),
                i64(la * la * la),
                i64(u64(la << 40) ^ u64(la)),
                i32(a & b),
                i32(a | b),
                i32(~a),
                i32(cdiv(a, b)),
                a - cdiv(a, b) * b,
            ]
        )
    return out


def int_guarded_division(d):
    out = []
    for u, v, l, m in zip(d["us"], d["vs"], d["ls"], d["ms"]):
        out.append(
            [
                u // v if v else 0,
                u % v if v else 0,
                i64(cdiv(l, m)) if m else 0,
                l - cdiv(l, m) * m if m else 0,
            ]
        )
    return out


def int_bits_wrapping(d):
    """(to-long x) - (as-long (to-double x)) + to-long (0 - as-int x), wrapping in 64 and 32 bits."""
    out = []
    for x in d["xs"]:
        f = float(np.float32(x))
        out.append(i64(i64(int(f) - i64(f64_bits(f))) + i32(0 - i32(f32_bits(f)))))
    return out


COMPUTE = {
    "uint_xorshift": uint_xorshift,
    "ulong_xorshift64": ulong_xorshift64,
    "uint_hash": uint_hash,
    "long_sum": long_sum,
    "uint_vectors": uint_vectors,
    "int_bits": int_bits,
    "int_wrap": int_wrap,
    "int_guarded_division": int_guarded_division,
    "int_bits_wrapping": int_bits_wrapping,
}


if __name__ == "__main__":
    expect_lines.main(COMPUTE)
