#!/usr/bin/env python3
"""Split `lift explore` output (stdin) into one file per variant whose description contains
argv[2]; the files go to argv[1] as <label>.lisp, label = the column block ("4x2", "4")."""
import re, sys, os
out, want = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
text = sys.stdin.read()
parts = re.split(r"^;; variant \d+: .*\n", text, flags=re.M)[1:]
for p in parts:
    desc, _, prog = p.partition("\n")
    if want not in desc:
        continue
    m = re.search(r"stencil columns of (\S+) outputs", desc)
    label = m.group(1) if m else "v"
    path = os.path.join(out, f"col{label}.lisp")
    if not os.path.exists(path):
        open(path, "w").write(prog.strip() + "\n")
        print(path)
