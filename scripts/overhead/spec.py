#!/usr/bin/env python3
"""The launch spec of a program's kernels for the hand-written host program (handwritten.c).

usage: spec.py PLAN.txt KERNELS.cl LIBRARY.c HEADER.h NAME=VALUE... > SPEC

PLAN.txt is `lift compile --emit plan --size ...`, KERNELS.cl `--emit cl` with the same sizes,
LIBRARY.c and HEADER.h what `lift build` wrote for them. The spec lists the buffers (inputs
filled with data, outputs left unset), each kernel's global and local sizes and its arguments, in
the plan's order. The kernel text must be the library's first variant's, byte for byte: both
programs then launch the same kernels."""
import ast
import re
import sys


def c_literal(lines):
    """The text of a C string literal written one quoted piece per line."""
    out = b""
    for line in lines:
        line = line.strip()
        if line.startswith('"'):
            out += ast.literal_eval("b" + line)
    return out.decode()


def library_source(c_text):
    m = re.search(r"static const char lr_source0\[\] =\n(.*?)\n;", c_text, re.S)
    if not m:
        sys.exit("no lr_source0 in the library's C source")
    return c_literal(m.group(1).splitlines())


def evaluate(expr, sizes):
    e = re.sub(r"\bv_(\w+)", lambda m: str(sizes[m.group(1)]), expr).replace("/", "//")
    return int(eval(e, {"__builtins__": {}}, {"min": min, "max": max, "pow": pow}))


def main():
    plan_path, cl_path, c_path, h_path, *size_args = sys.argv[1:]
    sizes = dict((k, int(v)) for k, v in (a.split("=") for a in size_args))
    plan = open(plan_path).read()
    cl = open(cl_path).read()
    if library_source(open(c_path).read()).strip() != cl.strip():
        sys.exit(f"the kernels of {cl_path} are not the library's: the comparison would not be fair")
    sig = re.search(r'"([^"\n]*) -> ([^"\n]*)"', open(h_path).read())
    params = [p.split(":") for p in sig.group(1).split()]
    print(f"source {cl_path}")
    buffers = {}
    section = None
    for line in plan.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            continue
        if section == "buffers" and line.startswith("  v_"):
            m = re.match(r"\s+(\S+) : (.*) x (\w+) \((.*)\)$", line)
            name, length, ctype, role = m.groups()
            esz = {"float": 4, "int": 4, "double": 8, "long": 8, "uint": 4, "ulong": 8, "char": 1, "uchar": 1}[ctype]
            kind = "in" if role.startswith("input") else "out"
            buffers[name] = len(buffers)
            print(f"buffer {evaluate(length, sizes) * esz} {kind}")
        elif section == "kernels" and line.startswith("  "):
            m = re.match(r"\s+(\w+) global \[(.*?)\](?: local \[(.*?)\])? args \((.*)\)$", line)
            name, glob, local, args = m.groups()
            g = [evaluate(x, sizes) for x in re.split(r",\s*(?![^()]*\))", glob)]
            l = [int(x) for x in local.split(",")] if local else []
            print(f"kernel {name} {len(g)} {' '.join(map(str, g))} {' '.join(map(str, l)) if l else '-'}")
            for a in re.split(r",\s*(?![^()]*\))", args):
                a = a.strip()
                if a.startswith("param "):
                    elem = params[int(a.split()[1])][1]
                    print(f"arg {elem} 2")
                elif a == "error flag":
                    print("arg flag")
                elif a.startswith("local "):
                    m = re.match(r"local (\S+) \((.*) elements\)", a)
                    print(f"arg local {evaluate(m.group(2), sizes) * 4}")
                elif a in buffers:
                    print(f"arg buf {buffers[a]}")
                else:
                    print(f"arg i32 {evaluate(a, sizes)}")


main()
