"""The training run of the profile-guided build of the compiled modules.

``setup.py`` compiles the engine's modules twice when it can (``TAXI_RSP_PGO``, on by
default with GCC): first instrumented, then — after this module has run a workload
through that build — with the branch and call counts it recorded (``-fprofile-use``),
so the C compiler lays out hot paths together and cold ones apart. The workload is a
mix of query shapes, not only the DEBS queries, so that every operator a user's query
may reach is trained: the two DEBS queries together (compiled plans, the native
Feeder, the DEBS listeners), Q1 on the reference operators, a grouped MINUS with
several aggregates and a correlated OPTIONAL over the taxi stream (SELECT results as
CSV), and the five ISWC 2011 queries over a small generated RDF stream with static
data. Outputs go to a scratch folder and are thrown away; nothing here decides a
result — a build without a profile computes the same answers, only slower.

    python -m taxi_rsp.pgo QUERIES_DIR SAMPLE_CSV SCRATCH_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

# Two more shapes over the taxi stream (their text, written to the scratch folder).
EXTRA_QUERIES = {
    "pgo_minus_groups": """
PREFIX taxi: <http://debs2015.org/taxi#>
SELECT ?pay (COUNT(?t) AS ?n) (AVG(?fare) AS ?meanFare) (MIN(?tip) AS ?leastTip) (SUM(?tip) AS ?tips)
WHERE {
  STREAM <http://debs2015.org/streams/trips> [RANGE 10m] {
    ?t taxi:paymentType ?pay ; taxi:fareAmount ?fare ; taxi:tipAmount ?tip .
  }
  MINUS { STREAM <http://debs2015.org/streams/trips> [RANGE 10m] { ?t taxi:tripDistance ?d } FILTER(?d > 5) }
}
GROUP BY ?pay
ORDER BY DESC(?n) ?pay
LIMIT 3
""",
    "pgo_optional_latest": """
PREFIX taxi: <http://debs2015.org/taxi#>
SELECT (COUNT(?t) AS ?trips) (COUNT(?later) AS ?followed) (MAX(?s) AS ?last)
WHERE {
  STREAM <http://debs2015.org/streams/trips> [RANGE 5m] { ?t taxi:medallion ?taxi ; taxi:seq ?s . }
  OPTIONAL {
    STREAM <http://debs2015.org/streams/trips> [RANGE 5m] { ?later taxi:medallion ?taxi ; taxi:seq ?s2 . }
    FILTER(?s2 > ?s)
  }
}
""",
}


def jobs(queries: Path, sample: Path, scratch: Path) -> list[list[str]]:
    """The ``taxi-rsp`` command lines of the training run, in order."""
    iswc = scratch / "iswc"
    runs = [
        ["synth-iswc", "--out", str(iswc), "--people", "200", "--static-triples", "2000",
         "--events", "2000", "--seed", "1"],
        ["run", str(sample), "--out", str(scratch / "debs"), "--query", str(queries / "q1.cqels"),
         "--query", str(queries / "q2.cqels")],
        ["run", str(sample), "--out", str(scratch / "reference"), "--query", str(queries / "q1.cqels"),
         "--reference"],
    ]
    for name in EXTRA_QUERIES:
        runs.append(["run", str(sample), "--out", str(scratch / name), "--query", str(scratch / f"{name}.cqels")])
    for n in range(1, 6):
        runs.append(["run", "--stream", str(iswc / "stream.tnt"), "--static", str(iswc / "dblp.nt"),
                     "--static", str(iswc / "floorplan.nq"), "--query", str(queries / "iswc2011" / f"q{n}.cqels"),
                     "--out", str(scratch / f"iswc-q{n}")])
    return [[*job, "--no-progress", "--force"] if job[0] == "run" else job for job in runs]


def train(queries: Path, sample: Path, scratch: Path) -> None:
    """Run every job; the first failure raises (the build then goes without a profile)."""
    from taxi_rsp.cli import main

    scratch.mkdir(parents=True, exist_ok=True)
    for name, text in EXTRA_QUERIES.items():
        (scratch / f"{name}.cqels").write_text(text, encoding="utf-8")
    for job in jobs(queries, sample, scratch):
        if main(job) != 0:
            raise RuntimeError(f"training job failed: taxi-rsp {' '.join(job)}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    train(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
