"""The `;; expect:` lines of examples, checked against (or written from) values computed outside
the compiler. `scan_examples.py`, `loop_examples.py` and `int_examples.py` each give a table of
computations; this module owns reading the examples' data and rewriting their expect lines.

An example names its data with a `;; data: FILE` line (default: `<name>.json`); sizes that the
data does not give come from a `;; sizes: K=4 N=8` line and are passed to the computation as
lower-case keyword arguments (`k=4`) when `sizes=True`.
"""
import json
import pathlib
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def header_values(lines, key):
    """The text after `;; key:` on the first such line, or None."""
    tag = f";; {key}:"
    return next((line[len(tag):].strip() for line in lines if line.startswith(tag)), None)


def expected(name, compute, sizes):
    lines = (EXAMPLES / f"{name}.lisp").read_text().split("\n")
    data = json.loads((EXAMPLES / (header_values(lines, "data") or f"{name}.json")).read_text())
    kwargs = {}
    if sizes:
        for kv in (header_values(lines, "sizes") or "").split():
            k, v = kv.split("=")
            kwargs[k.lower()] = int(v)
    return lines, ";; expect: " + json.dumps(compute(data, **kwargs), separators=(", ", ": "))


def main(computations, sizes=False):
    """Check every example of `computations` (name -> function of its data); with `--write` on
    the command line, rewrite the expect lines that differ. Exits 1 when one differs."""
    write = "--write" in sys.argv[1:]
    bad = 0
    for name, compute in computations.items():
        lisp = EXAMPLES / f"{name}.lisp"
        lines, want = expected(name, compute, sizes)
        at = [i for i, line in enumerate(lines) if line.startswith(";; expect:")]
        if len(at) != 1:
            print(f"{lisp.name}: needs exactly one `;; expect:` line")
            bad += 1
            continue
        if lines[at[0]] == want:
            continue
        if write:
            lines[at[0]] = want
            lisp.write_text("\n".join(lines))
            print(f"{lisp.name}: expect line written")
        else:
            print(f"{lisp.name}: the expect line differs\n  have {lines[at[0]]}\n  want {want}")
            bad += 1
    sys.exit(1 if bad else 0)
