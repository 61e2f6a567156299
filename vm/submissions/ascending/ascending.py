"""A deliberately wrong submission: Q1 routes ranked least frequent first.

It runs the engine, then reverses the order of the non-NULL routes on every line of
q1.csv, so every line with two or more routes is wrong while the shape stays valid.
"""

import subprocess
import sys
from pathlib import Path

data, out = sys.argv[1], Path(sys.argv[2])
subprocess.run(["taxi-rsp", "run", data, "--out", str(out), "--query", "q1"], check=True)
path = out / "q1.csv"
lines = []
for line in path.read_text().splitlines():
    fields = line.split(",")
    routes = [fields[i:i + 2] for i in range(2, 22, 2)]
    filled = [r for r in routes if r != ["NULL", "NULL"]]
    routes = filled[::-1] + [r for r in routes if r == ["NULL", "NULL"]]
    lines.append(",".join(fields[:2] + [f for r in routes for f in r] + fields[22:]))
path.write_text("".join(line + "\n" for line in lines))
