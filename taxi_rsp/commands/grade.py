"""`taxi-rsp grade`: run submissions in the grading VM and rank them.

    $ taxi-rsp grade vm/submissions/engine vm/submissions/baseline --data slice.csv
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from taxi_rsp.environment import ExecutionConfig
from taxi_rsp.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    from taxi_rsp.grading.image import DEFAULT_OUT
    from taxi_rsp.grading.qemu import VmConfig

    parser = subparsers.add_parser(
        "grade", help="grade submissions inside the VM image and print a leaderboard",
        description="Run each SUBMISSION inside the grading VM (see `taxi-rsp vm build`) on --data, compare "
        "its q1.csv/q2.csv with a reference, and write results.json and leaderboard.md to --out.")
    parser.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION",
                        help="submission directory or tarball with a submission.toml")
    parser.add_argument("--data", type=Path, required=True, help="input CSV (keep it small: TCG)")
    parser.add_argument("--reference", type=Path, default=None,
                        help="directory with reference q1.csv/q2.csv (default: run our engine "
                             "on the host, cross-checked by the Spark baseline)")
    parser.add_argument("--no-cross-check", action="store_true",
                        help="do not run the Spark baseline to cross-check the reference")
    parser.add_argument("--image", type=Path, default=DEFAULT_OUT, help="image directory")
    parser.add_argument("--out", type=Path, default=Path("out/grade"),
                        help="results directory (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="hard time limit of each submission in seconds (default %(default)s)")
    parser.add_argument("--cpus", type=int, default=VmConfig.cpus, help="vCPUs (default %(default)s)")
    parser.add_argument("--memory", type=int, default=VmConfig.memory_mb,
                        help="VM RAM in MiB (default %(default)s)")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                        help="QEMU accelerator (auto: TCG unless TAXI_RSP_VM_ACCEL=kvm; default %(default)s)")
    parser.set_defaults(func=_grade)


def _grade(args: argparse.Namespace) -> int:
    from taxi_rsp.grading.grader import GradeConfig, grade_submission
    from taxi_rsp.grading.image import ImageFiles, require_tools
    from taxi_rsp.grading.leaderboard import leaderboard, markdown
    from taxi_rsp.grading.qemu import VmConfig
    from taxi_rsp.grading.reference import load_reference, produce_reference
    from taxi_rsp.grading.report import write_reports

    if not args.data.is_file():
        raise UserError(f"--data {args.data}: no such file")
    if args.timeout <= 0 or args.cpus < 1 or args.memory < 256:
        raise UserError("--timeout must be > 0, --cpus >= 1, --memory >= 256 (MiB)")
    image = ImageFiles(args.image)
    image.check()
    require_tools(("mke2fs", "debugfs", "qemu-system-x86_64"))
    if args.reference is not None:
        reference = load_reference(args.reference)
    else:
        print(f"reference: running taxi-rsp on the host over {args.data}")
        reference = produce_reference(args.data, args.out / "reference",
                                      cross_check=not args.no_cross_check)
        check = reference.cross_check
        if check.get("with"):
            verdicts = ", ".join(f"{q} {'agrees' if check[q]['agree'] else 'DISAGREES'}"
                                 for q in reference.lines)
            print(f"reference cross-check with the Spark baseline: {verdicts}")
    config = GradeConfig(VmConfig(cpus=args.cpus, memory_mb=args.memory, accel=args.accel,
                                     auto_accel=ExecutionConfig.from_environment().vm_accel),
                         time_limit_s=args.timeout)
    grades = []
    for index, source in enumerate(args.submissions, start=1):
        print(f"[{index}/{len(args.submissions)}] grading {source} in the VM")
        workdir = args.out / "runs" / f"{index:02d}-{_slug(source)}"
        grade = grade_submission(source, args.data, reference, image, config, workdir)
        print(f"    {grade.verdict}: {grade.message}")
        grades.append(grade)
    standings = leaderboard(grades)
    context = {"data": str(args.data), "reference": reference.describe(),
               "vm": {"cpus": args.cpus, "memory_mb": args.memory, "time_limit_s": args.timeout,
                      "tcg_cpu": config.vm.tcg_cpu},
               "image_manifest": str(image.manifest)}
    write_reports(args.out, standings, context)
    print()
    print(markdown(standings), end="")
    print(f"\nresults: {args.out / 'results.json'}, {args.out / 'leaderboard.md'}")
    return 0


def _slug(path: Path) -> str:
    name = path.name.removesuffix(".gz").removesuffix(".tar").removesuffix(".tgz") or "submission"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:40]

