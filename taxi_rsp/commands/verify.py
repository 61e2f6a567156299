"""`taxi-rsp verify DIR_A DIR_B`: are two output folders the same answer?"""

from __future__ import annotations

import argparse
from pathlib import Path

from taxi_rsp.verify.compare import compare_folders


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="compare two output folders (e.g. engine vs baseline)",
        description="Compare q1.csv/q2.csv line by line on every field but the delay (whose NULLs "
        "must agree), the result files of other queries (named in summary.json) line by line, "
        "rejects.csv row by row, and the summary counts. Exit 0 when identical, 1 when different, "
        "2 on a usage error.",
    )
    parser.add_argument("dir_a", type=Path, metavar="DIR_A", help="an output folder (e.g. of `taxi-rsp run`)")
    parser.add_argument("dir_b", type=Path, metavar="DIR_B", help="the folder to compare it with (e.g. of `taxi-rsp baseline`)")
    parser.add_argument("--query", action="append", dest="queries", metavar="NAME",
                        help="compare only this query's CSV file, e.g. q1 (repeatable; default: q1.csv, "
                        "q2.csv and every result file summary.json names)")
    parser.add_argument("--limit", type=int, default=5, metavar="N",
                        help="differences shown per file (default 5)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    result = compare_folders(args.dir_a, args.dir_b, args.queries, limit=max(1, args.limit))
    print(f"A = {args.dir_a}\nB = {args.dir_b}")
    for difference in result.differences:
        print(f"  {difference}")
    for name, count in result.counted.items():
        print(f"  {name}: {count:,} differing line(s)")
    verdict = "identical" if result.identical else "DIFFERENT"
    print(f"{verdict}: compared {', '.join(result.compared) or 'nothing'}")
    return 0 if result.identical else 1
